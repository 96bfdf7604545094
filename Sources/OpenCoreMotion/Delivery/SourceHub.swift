import Dispatch
import Foundation
import MotionFusion
import MotionSources

/// Shares one ``SensorSource`` between every consumer of it: managers' pull and push updates and
/// async sequences alike.
///
/// The hub runs the source at the fastest rate any consumer needs, thins the stream for each consumer
/// by timestamp (``Decimator``), runs sensor fusion once per mode for device motion, and reports a
/// source failure once to every consumer.
///
/// ## Threading
/// ``add(_:)`` is synchronous: the source runs when it returns, or it throws. ``remove(_:)`` and
/// ``setInterval(_:for:)`` take effect at once for delivery and reconfigure the source shortly after,
/// on the hub's serial queue; so they never block, even when called from the source's own thread.
/// Samples arrive on the source's thread; consumer callbacks run there, outside the hub's lock.
final class SourceHub: Sendable {
    /// The source shared.
    let source: any SensorSource

    fileprivate struct Consumer {
        var spec: ConsumerSpec
        var decimator: Decimator
        /// The consumer's reference frame (for device motion), created at its first update.
        var projection: ReferenceFrameProjection?
        var movementNoticeSent = false
    }

    private struct State {
        var consumers: [Int: Consumer] = [:]
        var nextID = 0
        var estimator: FusionDriver?
        var lastTimestamp: [SensorKind: Double] = [:]
        var granted: [SensorKind: Double] = [:]
        var applied = SensorDemand.none
    }

    private let state = Locked(State())
    private let reconfigure = DispatchQueue(label: "OpenCoreMotion.SourceHub.reconfigure")

    /// The rate in Hz at which device motion runs the sensors, at least: fusion wants samples often
    /// even when the consumer wants few updates.
    static let fusionRate = 100.0

    private init(source: any SensorSource) {
        self.source = source
    }

    private static let registry = Locked<[ObjectIdentifier: Weak]>([:])
    private struct Weak: @unchecked Sendable { weak var hub: SourceHub? }

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
        let id = state.withLock { s -> Int in
            let id = s.nextID
            s.nextID += 1
            s.consumers[id] = Consumer(spec: spec, decimator: Decimator(interval: spec.interval))
            return id
        }
        let failure: NSError? = reconfigure.sync { self.reconcile() }
        if let failure {
            state.withLock { _ = $0.consumers.removeValue(forKey: id) }
            reconfigure.async { _ = self.reconcile() }
            throw failure
        }
        return id
    }

    /// Unregisters a consumer: it gets nothing more. The source slows or stops shortly after.
    func remove(_ id: Int) {
        let removed = state.withLock { $0.consumers.removeValue(forKey: id) != nil }
        if removed { reconfigure.async { _ = self.reconcile() } }
    }

    /// Changes a consumer's interval (seconds, already clamped); takes effect with the next sample.
    func setInterval(_ interval: Double, for id: Int) {
        let changed = state.withLock { s -> Bool in
            guard s.consumers[id] != nil, s.consumers[id]!.spec.interval != interval else { return false }
            s.consumers[id]!.spec.interval = interval
            s.consumers[id]!.decimator = Decimator(interval: interval)
            return true
        }
        if changed { reconfigure.async { _ = self.reconcile() } }
    }

    /// Waits until every reconfiguration asked for so far has reached the source.
    func settle() {
        reconfigure.sync {}
    }

    /// The rate in Hz the source granted for each running sensor.
    var grantedRates: [SensorKind: Double] { state.withLock { $0.granted } }

    /// Brings the source's demand in line with the consumers. Runs on `reconfigure` only.
    private func reconcile() -> NSError? {
        let demand = state.withLock { s -> SensorDemand? in
            let d = Self.demand(for: s.consumers.values.map(\.spec), info: source.info)
            return d == s.applied ? nil : d
        }
        guard let demand else { return nil }
        do {
            let granted = try source.apply(demand) { [weak self] event in self?.handle(event) }
            state.withLock { s in
                s.applied = demand
                s.granted = granted
                if demand.isEmpty {
                    s.estimator = nil
                    s.lastTimestamp = [:]
                }
            }
            return nil
        } catch {
            return error.coreMotionError
        }
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
                let fused = max(rate, fusionRate)
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

    private typealias Action = (@Sendable (HubOutput) -> Void, HubOutput)

    private func handle(_ event: SourceEvent) {
        switch event {
        case .sample(let sample):
            guard sample.timestamp.isFinite, sample.value.isFinite else { return }
            let actions = state.withLock { s in route(sample, &s) }
            for (deliver, output) in actions { deliver(output) }
        case .failed(let error):
            let consumers = state.withLock { s -> [Consumer] in
                defer { s.consumers.removeAll() }
                return Array(s.consumers.values)
            }
            let nsError = error.coreMotionError
            for c in consumers { c.spec.deliver(.failure(nsError)) }
            reconfigure.async { _ = self.reconcile() }
        case .finished:
            let consumers = state.withLock { Array($0.consumers.values) }
            for c in consumers { c.spec.deliver(.finished) }
        case .interrupted(let error):
            // Non-fatal: each consumer hears of it once (a notice), stays registered, and the next sample resumes.
            let consumers = state.withLock { Array($0.consumers.values) }
            let nsError = error.coreMotionError
            for c in consumers { c.spec.deliver(.notice(nsError)) }
        }
    }

    /// Decides, under the lock, who gets what from one sample.
    private func route(_ sample: RawSample, _ s: inout State) -> [Action] {
        if let last = s.lastTimestamp[sample.sensor], sample.timestamp <= last { return [] }
        s.lastTimestamp[sample.sensor] = sample.timestamp
        let period = 1 / (s.granted[sample.sensor] ?? SourceHub.fusionRate)
        var actions: [Action] = []
        var raw: HubOutput?
        var needs6D = false
        var needs9D = false
        for id in s.consumers.keys {
            let stream = s.consumers[id]!.spec.stream
            if stream.rawSensor == sample.sensor {
                guard s.consumers[id]!.decimator.accept(sample.timestamp, sourcePeriod: period) else { continue }
                raw = raw ?? Self.output(for: sample)
                actions.append((s.consumers[id]!.spec.deliver, raw!))
            } else if case .deviceMotion = stream {
                if stream.usesMagnetometer { needs9D = true } else { needs6D = true }
            }
        }
        guard needs6D || needs9D else {
            s.estimator = nil
            return actions
        }
        let uses9D = needs9D && source.info.sensors[.magnetometer] != nil
        if s.estimator == nil { s.estimator = FusionDriver(usesMagnetometer: uses9D) }
        s.estimator!.usesMagnetometer = uses9D
        guard s.estimator!.update(sample) else { return actions }
        let estimate = s.estimator!.estimate
        let needsMovement = uses9D && estimate.calibrationNeedsMovement
        for id in s.consumers.keys {
            let spec = s.consumers[id]!.spec
            guard case .deviceMotion(let frame) = spec.stream,
                  s.consumers[id]!.decimator.accept(sample.timestamp, sourcePeriod: period)
            else { continue }
            let motion = Self.deviceMotion(estimate, at: sample.timestamp, frame: frame, consumer: &s.consumers[id]!)
            if spec.showsDeviceMovementDisplay, spec.stream.usesMagnetometer, needsMovement,
               !s.consumers[id]!.movementNoticeSent {
                s.consumers[id]!.movementNoticeSent = true
                actions.append((spec.deliver, .notice(.coreMotion(CMErrorDeviceRequiresMovement, "move the device in a figure eight to calibrate the magnetometer"))))
            }
            actions.append((spec.deliver, .deviceMotion(motion)))
        }
        return actions
    }

    private static func output(for sample: RawSample) -> HubOutput {
        let v = sample.value
        switch sample.sensor {
        case .accelerometer:
            return .accelerometer(CMAccelerometerData(acceleration: CMAcceleration(v), timestamp: sample.timestamp))
        case .gyro:
            return .gyro(CMGyroData(rotationRate: CMRotationRate(v), timestamp: sample.timestamp))
        case .magnetometer:
            return .magnetometer(CMMagnetometerData(magneticField: CMMagneticField(v), timestamp: sample.timestamp))
        }
    }

    /// Expresses an estimate in a consumer's reference frame (MotionFusion's ``ReferenceFrameProjection``).
    private static func deviceMotion(_ e: AttitudeEstimate, at t: Double, frame: CMAttitudeReferenceFrame, consumer c: inout Consumer) -> CMDeviceMotion {
        var projection = c.projection ?? ReferenceFrameProjection(frame.attitudeReferenceFrame(declinationDegrees: c.spec.declination))
        let m = projection.motion(e, timestamp: t)
        c.projection = projection
        return CMDeviceMotion(
            timestamp: t,
            attitude: CMAttitude(rotation: m.attitude),
            rotationRate: CMRotationRate(m.rotationRate),
            gravity: CMAcceleration(m.gravity),
            userAcceleration: CMAcceleration(m.userAcceleration),
            magneticField: CMCalibratedMagneticField(
                field: CMMagneticField(m.magneticField),
                accuracy: CMMagneticFieldCalibrationAccuracy(m.magneticFieldAccuracy)
            ),
            heading: m.heading
        )
    }
}

extension CMAttitudeReferenceFrame {
    /// The MotionFusion frame of a single Core Motion frame; `declinationDegrees` (positive east) for
    /// true north. Any other value is the arbitrary frame.
    func attitudeReferenceFrame(declinationDegrees: Double) -> AttitudeReferenceFrame {
        switch self {
        case .xMagneticNorthZVertical: .magneticNorth
        case .xTrueNorthZVertical: .trueNorth(declination: declinationDegrees * .pi / 180)
        case .xArbitraryCorrectedZVertical: .arbitraryCorrected
        default: .arbitrary
        }
    }
}
