import Dispatch
import Foundation
import MotionFusion
import Logging
import MotionSources

/// Shares one ``SensorSource`` between every consumer of it: managers' pull and push updates and
/// async sequences alike.
///
/// The hub runs the source at the fastest rate any consumer needs, thins the stream for each consumer
/// by timestamp (``Decimator``), runs sensor fusion once for device motion, reports a source failure
/// once to every consumer, and passes an interruption (`SourceEvent.interrupted`) once to every
/// consumer without removing them. Its decisions are made by ``SourceHubState``, a state machine
/// returning ``HubAction``s; this class only locks, performs the actions and calls the source.
///
/// ## Threading
/// ``add(_:)`` is synchronous: the source runs when it returns, or it throws. ``remove(_:)`` and
/// ``setInterval(_:for:)`` take effect at once for delivery and reconfigure the source shortly after,
/// on another thread; so they never block, even when called from the source's own thread. Only the
/// thread holding the state's reconciliation token calls the source's `apply`. Samples arrive on the
/// source's thread; consumer callbacks run there, outside the hub's lock.
final class SourceHub: Sendable {
    /// The source shared.
    let source: any SensorSource

    /// The device's stored calibration (``DeviceCalibrationStore``), read when the hub is created, applied to
    /// every sample before anything else sees it; `nil` when none is stored (or the stored one is unusable:
    /// then an error is logged and the source runs uncalibrated).
    let calibration: DeviceCalibrationRecord?

    /// Where what device-motion fusion learns about the device is kept (``LearnedCalibrationRecord``), and
    /// under which identity and explicit calibration; `nil` when stored calibration is off or the source is
    /// not persisted (``DeviceCalibrationStore/learnsPersistently(_:)``).
    private let learnedStore: (store: DeviceCalibrationStore, identity: String, basis: String?)?

    private let state: ConditionLocked<SourceHubState>

    /// Where reconfigurations after ``remove(_:)`` and ``setInterval(_:for:)`` run: a serial queue of
    /// the hub's own, on libdispatch's overcommit pool, so a stop takes effect even while every thread
    /// of the global pool is busy with the app's work (see ``SerialOperationQueue``).
    private let reconciler = DispatchQueue(label: "OpenCoreMotion.SourceHub")

    /// The source as a provider of its own attitude, when it is one (looked up once, not per sample).
    private let ownAttitudeProvider: (any OwnAttitudeProviding)?

    /// Whether the source runs as fast as its consumers take its samples (``ConsumerPacedSource``: a
    /// simulator or replay in virtual time), so each consumer bounds what waits for it.
    let isPacedByConsumers: Bool

    private init(source: any SensorSource) {
        self.source = source
        ownAttitudeProvider = source as? any OwnAttitudeProviding
        isPacedByConsumers = (source as? any ConsumerPacedSource)?.isPacedByConsumers ?? false
        calibration = Self.storedCalibration(of: source.info)
        var hubState = SourceHubState()
        if let c = calibration?.calibration, c.calibratesMagnetometer {
            hubState.priorMagneticAccuracy = c.magnetometerAccuracy
        }
        if let store = DeviceCalibrationStore.current, DeviceCalibrationStore.learnsPersistently(source.info) {
            let identity = DeviceCalibrationStore.identity(of: source.info)
            learnedStore = (store, identity, calibration?.created)
            hubState.keepsLearned = true
            let loaded = Self.learnedCalibration(store: store, identity: identity, basis: calibration?.created)
            if let loaded { hubState.loadLearned(loaded) }
            // Fault in what a save runs now, on the thread that will save, not at the first checkpoint.
            let basis = calibration?.created
            LearnedCalibrationWriter.shared.warm {
                let sample = LearnedCalibration(gyroBias: .zero, gyroBiasVariance: Vector3(1e-8, 1e-8, 1e-8), magneticOffset: .zero,
                                                magneticGains: Vector3(1, 1, 1), magneticFieldStrength: 50, magneticAccuracy: .low)
                _ = LearnedCalibrationRecord(identity: identity, updated: DeviceCalibrationRecord.now(), basis: basis,
                                             learned: loaded ?? sample).encoded()
            }
        } else {
            learnedStore = nil
        }
        state = ConditionLocked(hubState)
    }

    /// The learned state of an identity, if any and usable over the explicit calibration `basis` (the
    /// `created` time of the explicit calibration in use, `nil` for none); an unusable file gives one log
    /// line and the run starts uncalibrated.
    private static func learnedCalibration(store: DeviceCalibrationStore, identity: String, basis: String?) -> LearnedCalibration? {
        do {
            guard let record = try store.loadLearned(identity) else { return nil }
            guard record.basis == basis else {
                Logger(label: "OpenCoreMotion").notice("learned calibration ignored: \(store.learnedPath(for: identity)) was learned over another explicit calibration; it is replaced when this run stops")
                return nil
            }
            return record.learned
        } catch {
            Logger(label: "OpenCoreMotion").error("learned calibration ignored: \(error.description)")
            return nil
        }
    }

    /// Saves learned state (on ``LearnedCalibrationWriter``'s thread, never on the delivery thread). A
    /// failure gives one log line.
    private func save(_ learned: LearnedCalibration) {
        guard let target = learnedStore else { return }
        let record = LearnedCalibrationRecord(identity: target.identity, updated: DeviceCalibrationRecord.now(),
                                              basis: target.basis, learned: learned)
        do {
            try target.store.saveLearned(record)
        } catch {
            Logger(label: "OpenCoreMotion").error("learned calibration not saved: \(error.description)")
        }
    }

    /// The stored calibration of a source, if any and usable.
    private static func storedCalibration(of info: SourceInfo) -> DeviceCalibrationRecord? {
        guard let store = DeviceCalibrationStore.current else { return nil }
        do {
            return try store.load(DeviceCalibrationStore.identity(of: info))
        } catch {
            Logger(label: "OpenCoreMotion").error("calibration ignored: \(error.description)")
            return nil
        }
    }

    private struct Weak: Sendable { weak let hub: SourceHub? }
    private static let registry = Locked<[ObjectIdentifier: Weak]>([:])

    /// The one hub of `source`: every manager built on the same source object shares it.
    static func hub(for source: any SensorSource) -> SourceHub {
        registry.withLock { map in
            let key = ObjectIdentifier(source)
            if let hub = map[key]?.hub { return hub }
            let hub = SourceHub(source: source)
            map[key] = Weak(hub: hub)
            map = map.filter { $0.value.hub != nil }
            return hub
        }
    }

    // MARK: Consumers

    /// Registers a consumer and makes sure the source runs for it.
    /// - Returns: an identifier for ``remove(_:)`` and ``setInterval(_:for:)``.
    /// - Throws: the source's failure to start, in ``CMErrorDomain``; the consumer is then not registered.
    func add(_ spec: ConsumerSpec) throws(NSError) -> Int {
        let id = state.withLock { $0.add(spec) }
        // Take the reconciliation token, waiting for another holder to finish, and apply now.
        state.withLock(waiting: { s -> LockStep<Void> in s.tryTakeToken() ? .done(()) : .wait })
        if let failure = reconcile() {
            perform(state.withLock { $0.remove(id) })
            throw failure
        }
        return id
    }

    /// Unregisters a consumer: it gets nothing more. The source slows or stops shortly after.
    func remove(_ id: Int) {
        perform(state.withLock { $0.remove(id) })
    }

    /// Changes a consumer's interval (seconds, already clamped); takes effect with the next sample.
    func setInterval(_ interval: Double, for id: Int) {
        perform(state.withLock { $0.setInterval(interval, for: id) })
    }

    /// Waits until every reconfiguration asked for so far has reached the source.
    func settle() {
        _ = state.wait { $0.reconciling ? nil : () }
    }

    /// ``settle()`` for every hub alive in the process, one after the other: the last step of a
    /// process about to exit.
    static func settleAll() {
        let hubs = registry.withLock { map in map.values.compactMap(\.hub) }
        for hub in hubs { hub.settle() }
    }

    /// Whether a reconfiguration of the source is under way (after ``remove(_:)`` of the last consumer:
    /// until the source is stopped and what fusion learned is saved). Does not wait.
    var isReconciling: Bool { state.withLock { $0.reconciling } }

    /// The rate in Hz the source granted for each running sensor.
    var grantedRates: [SensorKind: Double] { state.withLock { $0.granted } }

    // MARK: Actions

    private func perform(_ actions: HubActions) {
        for action in actions {
            switch action {
            case .deliver(let deliver, let output):
                deliver(output)
            case .startReconciliation:
                reconciler.async { _ = self.reconcile() }
            case .saveLearned(let learned):
                guard learnedStore != nil else { continue }
                LearnedCalibrationWriter.shared.async { self.save(learned) }
            }
        }
    }

    /// Brings the source's demand in line with the consumers, until it is. Called by the holder of
    /// the reconciliation token, which it releases before returning.
    /// - Returns: the error of the last demand the source refused, if the last attempt failed.
    private func reconcile() -> NSError? {
        while let demand = state.withLock(broadcasting: true, { $0.nextDemand(info: source.info) }) {
            do {
                let granted = try source.apply(demand) { [weak self] event in self?.handle(event) }
                // A stopped source dropped its fusion: save what it learned, here (never the delivery thread).
                if let learned = state.withLock({ s -> LearnedCalibration? in
                    s.applied(demand, granted: granted)
                    return s.takeUnsavedLearned()
                }) {
                    LearnedCalibrationWriter.shared.sync { self.save(learned) }
                }
            } catch {
                state.withLock(broadcasting: true) { $0.applyFailed() }
                return error.coreMotionError
            }
        }
        return nil
    }

    private func handle(_ event: SourceEvent) {
        var event = event
        if let c = calibration?.calibration, case .sample(var sample) = event {
            switch sample.sensor {
            case .accelerometer: sample.value = c.accelerometer(sample.value)
            case .gyro: sample.value = c.gyro(sample.value)
            case .magnetometer: sample.value = c.magnetometer(sample.value)
            case .pressure: break
            }
            event = .sample(sample)
        }
        // A source that reports its own attitude (a phone with `?motion=phone`) is read before the
        // hub's lock is taken, so no lock is ever held across the two.
        var basis = DeviceMotionBasis.fusion
        if case .sample(let sample) = event, let own = ownAttitudeProvider, own.reportsOwnAttitude {
            basis = .own(own.ownAttitude(at: sample.timestamp))
        }
        perform(state.withLock { $0.handle(event, info: source.info, basis: basis) })
    }
}
