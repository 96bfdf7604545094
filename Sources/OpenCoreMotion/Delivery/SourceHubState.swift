import Foundation
import MotionFusion
import MotionSources

/// What the hub must do after a step of its state machine, outside its lock.
enum HubAction {
    /// Hand an output to a consumer.
    case deliver(@Sendable (HubOutput) -> Void, HubOutput)
    /// Start a reconciliation of the source's demand with the consumers, off the caller's thread
    /// (the caller now holds the reconciliation token; see ``SourceHubState/reconciling``).
    case startReconciliation
    /// Save what device-motion fusion learned (``DeviceMotionFusion/takeUnsavedLearned()``), off the caller's thread.
    case saveLearned(LearnedCalibration)
}

/// The hub's state machine: the registry of consumers, the demand they make on the source, and the
/// routing of source events to them. It performs no I/O and calls nobody; every step returns the
/// ``HubAction``s for ``SourceHub`` to perform outside its lock (as swift-nio's state machines do).
/// Device motion is computed by ``DeviceMotionFusion``, which the state owns.
struct SourceHubState {
    struct Consumer {
        var id: Int
        var spec: ConsumerSpec
        var decimator: Decimator
        var movementNoticeSent = false
    }

    /// In registration order. An array, not a dictionary keyed by identifier: routing a sample walks it
    /// by integer index and updates each decimator in place, which a dictionary's `values.indices`
    /// (holding a second reference to the storage) would turn into a copy of the storage per sample.
    private(set) var consumers: [Consumer] = []
    private var nextID = 0
    private var fusion = DeviceMotionFusion()
    /// The grade of a stored magnetometer calibration applied before the samples reach the hub, which the
    /// fusion starts from (``DeviceMotionFusion/priorMagneticAccuracy``). Default: none.
    var priorMagneticAccuracy: MagneticCalibrationAccuracy {
        get { fusion.priorMagneticAccuracy }
        set { fusion.priorMagneticAccuracy = newValue }
    }
    /// Whether device-motion fusion keeps what it learns for the next filter and for saving
    /// (``DeviceMotionFusion/keepsLearned``). Default `false`.
    var keepsLearned: Bool {
        get { fusion.keepsLearned }
        set { fusion.keepsLearned = newValue }
    }
    /// Starts device-motion fusion from what an earlier run learned (``DeviceMotionFusion/load(_:)``).
    mutating func loadLearned(_ learned: LearnedCalibration) {
        fusion.load(learned)
    }
    /// The learned state waiting to be saved, once (after the source stopped: see ``applied(_:granted:)``).
    mutating func takeUnsavedLearned() -> LearnedCalibration? {
        fusion.takeUnsavedLearned()
    }
    private var lastTimestamp: [SensorKind: Double] = [:]
    /// `true` after an `.interrupted` event until the next sample: further interruptions are not repeated.
    private(set) var interrupted = false

    /// The demand the source runs, and the rates it granted.
    private(set) var applied = SensorDemand.none
    private(set) var granted: [SensorKind: Double] = [:]
    /// `true` while one thread holds the token to call `source.apply`; only that thread calls it.
    private(set) var reconciling = false

    // MARK: Registry

    /// Registers a consumer; returns its identifier.
    mutating func add(_ spec: ConsumerSpec) -> Int {
        let id = nextID
        nextID += 1
        consumers.append(Consumer(id: id, spec: spec, decimator: Decimator(interval: spec.interval)))
        return id
    }

    /// Unregisters a consumer; returns the actions that follow (a reconciliation when it was registered).
    mutating func remove(_ id: Int) -> HubActions {
        guard let index = consumers.firstIndex(where: { $0.id == id }) else { return HubActions() }
        consumers.remove(at: index)
        fusion.forget(id)
        return requestReconciliation()
    }

    /// Changes a consumer's interval; returns the actions that follow.
    mutating func setInterval(_ interval: Double, for id: Int) -> HubActions {
        guard let index = consumers.firstIndex(where: { $0.id == id }), consumers[index].spec.interval != interval else {
            return HubActions()
        }
        consumers[index].spec.interval = interval
        consumers[index].decimator = Decimator(interval: interval)
        return requestReconciliation()
    }

    // MARK: Demand

    /// Takes the reconciliation token if it is free: a reconciliation must then run. When another
    /// thread holds it, that thread picks the change up before it lets go.
    private mutating func requestReconciliation() -> HubActions {
        guard !reconciling else { return HubActions() }
        reconciling = true
        return HubActions(.startReconciliation)
    }

    /// Takes the token if it is free; `false` when another thread holds it (wait and retry).
    mutating func tryTakeToken() -> Bool {
        guard !reconciling else { return false }
        reconciling = true
        return true
    }

    /// For the token holder: the demand to apply next, or `nil` when the source already runs what the
    /// consumers need, in which case the token is released.
    mutating func nextDemand(info: SourceInfo) -> SensorDemand? {
        let demand = Self.demand(for: consumers.map(\.spec), info: info)
        if demand == applied {
            reconciling = false
            return nil
        }
        return demand
    }

    /// For the token holder: `demand` is running at `granted` rates.
    mutating func applied(_ demand: SensorDemand, granted: [SensorKind: Double]) {
        applied = demand
        self.granted = granted
        if demand.isEmpty {
            fusion.reset()
            lastTimestamp = [:]
        }
    }

    /// For the token holder: applying a demand failed; the token is released.
    mutating func applyFailed() {
        reconciling = false
    }

    /// The demand that serves every consumer in `specs`: each sensor at the fastest rate asked for,
    /// and the smallest maximum latency any consumer accepts.
    static func demand(for specs: [ConsumerSpec], info: SourceInfo) -> SensorDemand {
        var rates: [SensorKind: Double] = [:]
        func want(_ sensor: SensorKind, _ rate: Double) {
            rates[sensor] = max(rates[sensor] ?? 0, rate)
        }
        for spec in specs {
            let rate = 1 / spec.interval
            if let sensor = spec.stream.rawSensor {
                want(sensor, rate)
            } else {
                let fused = max(rate, DeviceMotionFusion.minimumRate)
                want(.gyro, fused)
                want(.accelerometer, fused)
                if spec.stream.usesMagnetometer, info.sensors[.magnetometer] != nil {
                    want(.magnetometer, fused)
                }
            }
        }
        let latency = specs.map(\.maximumLatency).min() ?? 0
        return SensorDemand(rates: rates, maximumLatency: rates.isEmpty ? 0 : latency)
    }

    // MARK: Events from the source

    /// One event from the source:
    /// - `.sample`: routed to the consumers that want it (raw, or fused into device motion);
    ///   it also ends an interruption, silently;
    /// - `.interrupted(e)`: `e` once to every consumer as a notice (they stay registered); repeated
    ///   interruptions before the next sample are not passed on;
    /// - `.failed(e)`: `e` to every consumer, which are all removed, and the source is reconciled
    ///   (stopped);
    /// - `.finished`: to every consumer.
    /// `basis` says where device motion comes from (default: the hub's fusion).
    mutating func handle(_ event: SourceEvent, info: SourceInfo, basis: DeviceMotionBasis = .fusion) -> HubActions {
        switch event {
        case .sample(let sample):
            var actions = route(sample, info: info, basis: basis)
            if fusion.hasUnsavedLearned, let learned = fusion.takeUnsavedLearned() {
                actions.append(.saveLearned(learned))
            }
            return actions
        case .interrupted(let error):
            guard !interrupted else { return HubActions() }
            interrupted = true
            return toEveryConsumer(.notice(error.coreMotionError))
        case .failed(let error):
            var actions = toEveryConsumer(.failure(error.coreMotionError))
            for consumer in consumers { fusion.forget(consumer.id) }
            consumers.removeAll()
            actions.append(contentsOf: requestReconciliation())
            return actions
        case .finished:
            return toEveryConsumer(.finished)
        }
    }

    private func toEveryConsumer(_ output: HubOutput) -> HubActions {
        var actions = HubActions()
        for consumer in consumers { actions.append(.deliver(consumer.spec.deliver, output)) }
        return actions
    }

    /// Decides who gets what from one sample.
    private mutating func route(_ sample: RawSample, info: SourceInfo, basis: DeviceMotionBasis) -> HubActions {
        // A barometer's pressure is for CMAltimeter, which runs its own source: no consumer of a hub takes it.
        guard sample.sensor.isMotion, sample.timestamp.isFinite, sample.value.isFinite else { return HubActions() }
        interrupted = false
        if let last = lastTimestamp[sample.sensor], sample.timestamp <= last { return HubActions() }
        lastTimestamp[sample.sensor] = sample.timestamp
        let period = 1 / (granted[sample.sensor] ?? DeviceMotionFusion.minimumRate)
        var actions = HubActions()
        var raw: HubOutput?
        var needs6D = false
        var needs9D = false
        for index in consumers.indices {
            let stream = consumers[index].spec.stream
            if stream.rawSensor == sample.sensor {
                guard consumers[index].decimator.accept(sample.timestamp, sourcePeriod: period) else { continue }
                guard let output = raw ?? Self.output(for: sample) else { continue }
                raw = output
                actions.append(.deliver(consumers[index].spec.deliver, output))
            } else if case .deviceMotion = stream {
                if stream.usesMagnetometer { needs9D = true } else { needs6D = true }
            }
        }
        guard needs6D || needs9D else {
            fusion.reset()
            return actions
        }
        if case .own(let own) = basis {
            let trigger: SensorKind = info.sensors[.gyro] != nil ? .gyro : .accelerometer
            guard let m = fusion.updateOwn(sample, own: own, trigger: trigger) else { return actions }
            for index in consumers.indices {
                let spec = consumers[index].spec
                guard case .deviceMotion(let frame) = spec.stream,
                      consumers[index].decimator.accept(sample.timestamp, sourcePeriod: period)
                else { continue }
                let motion = fusion.deviceMotion(m, frame: frame, declination: spec.declination, consumer: consumers[index].id)
                actions.append(.deliver(spec.deliver, .deviceMotion(motion)))
            }
            return actions
        }
        let uses9D = needs9D && info.sensors[.magnetometer] != nil
        guard let estimate = fusion.update(sample, usesMagnetometer: uses9D) else { return actions }
        let needsMovement = uses9D && estimate.calibrationNeedsMovement
        for index in consumers.indices {
            let spec = consumers[index].spec
            guard case .deviceMotion(let frame) = spec.stream,
                  consumers[index].decimator.accept(sample.timestamp, sourcePeriod: period)
            else { continue }
            let motion = fusion.deviceMotion(estimate, at: sample.timestamp, frame: frame, declination: spec.declination,
                                             consumer: consumers[index].id)
            if spec.showsDeviceMovementDisplay, spec.stream.usesMagnetometer, needsMovement,
               !consumers[index].movementNoticeSent {
                consumers[index].movementNoticeSent = true
                actions.append(.deliver(spec.deliver, .notice(.coreMotion(CMErrorDeviceRequiresMovement, "move the device in a figure eight to calibrate the magnetometer"))))
            }
            actions.append(.deliver(spec.deliver, .deviceMotion(motion)))
        }
        return actions
    }

    private static func output(for sample: RawSample) -> HubOutput? {
        let v = sample.value
        switch sample.sensor {
        case .accelerometer:
            return .accelerometer(CMAccelerometerData(acceleration: CMAcceleration(v), timestamp: sample.timestamp))
        case .gyro:
            return .gyro(CMGyroData(rotationRate: CMRotationRate(v), timestamp: sample.timestamp))
        case .magnetometer:
            return .magnetometer(CMMagnetometerData(magneticField: CMMagneticField(v), timestamp: sample.timestamp))
        case .pressure:
            return nil
        }
    }
}
