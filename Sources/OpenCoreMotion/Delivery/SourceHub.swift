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

    private struct Consumer {
        var spec: ConsumerSpec
        var decimator: Decimator
        /// For the arbitrary frames: the rotation taking the first attitude's yaw to zero.
        var yawReset: Quaternion?
        var movementNoticeSent = false
    }

    private struct State {
        var consumers: [Int: Consumer] = [:]
        var nextID = 0
        var estimator6D: ComplementaryEstimator?
        var estimator9D: ComplementaryEstimator?
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
                    s.estimator6D = nil
                    s.estimator9D = nil
                    s.lastTimestamp = [:]
                }
            }
            return nil
        } catch {
            return error.coreMotionError
        }
    }

    /// The demand that serves every consumer in `specs`.
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
        return SensorDemand(rates: rates)
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
            s.estimator6D = nil
            s.estimator9D = nil
            return actions
        }
        if needs6D, s.estimator6D == nil { s.estimator6D = ComplementaryEstimator(usesMagnetometer: false) }
        if needs9D, s.estimator9D == nil { s.estimator9D = ComplementaryEstimator(usesMagnetometer: true) }
        if !needs6D { s.estimator6D = nil }
        if !needs9D { s.estimator9D = nil }
        let e6 = s.estimator6D?.update(sample)
        let e9 = s.estimator9D?.update(sample)
        guard e6 != nil || e9 != nil else { return actions }
        for id in s.consumers.keys {
            let spec = s.consumers[id]!.spec
            guard case .deviceMotion(let frame) = spec.stream,
                  let estimate = spec.stream.usesMagnetometer ? e9 : e6,
                  s.consumers[id]!.decimator.accept(sample.timestamp, sourcePeriod: period)
            else { continue }
            let motion = Self.deviceMotion(estimate, at: sample.timestamp, frame: frame, consumer: &s.consumers[id]!)
            if spec.showsDeviceMovementDisplay, estimate.needsMovement, !s.consumers[id]!.movementNoticeSent {
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

    /// Expresses an estimate in a consumer's reference frame.
    private static func deviceMotion(_ e: MotionEstimate, at t: Double, frame: CMAttitudeReferenceFrame, consumer c: inout Consumer) -> CMDeviceMotion {
        var q = e.attitude
        var heading = -1.0
        var field = CMCalibratedMagneticField(field: CMMagneticField(e.magneticField), accuracy: e.magneticAccuracy)
        switch frame {
        case .xMagneticNorthZVertical:
            heading = ReferenceFrames.heading(of: q)
        case .xTrueNorthZVertical:
            q = Quaternion(axis: Vector3(0, 0, 1), angle: -c.spec.declination * .pi / 180) * q
            heading = ReferenceFrames.heading(of: q)
        default:
            let reset = c.yawReset ?? Quaternion(axis: Vector3(0, 0, 1), angle: -ReferenceFrames.yaw(of: q))
            c.yawReset = reset
            q = reset * q
            if frame == .xArbitraryZVertical { field = CMCalibratedMagneticField() }
        }
        return CMDeviceMotion(
            timestamp: t,
            attitude: CMAttitude(rotation: q),
            rotationRate: CMRotationRate(e.rotationRate),
            gravity: CMAcceleration(e.gravity),
            userAcceleration: CMAcceleration(e.userAcceleration),
            magneticField: field,
            heading: heading
        )
    }
}

/// Conversions between reference frames.
enum ReferenceFrames {
    /// Core Motion's yaw of a device → reference rotation, radians.
    static func yaw(of q: Quaternion) -> Double {
        atan2(2 * (q.w * q.z - q.x * q.y), 1 - 2 * (q.x * q.x + q.z * q.z))
    }

    /// Compass heading in degrees 0..<360, clockwise from the frame's x axis (north), of where the
    /// top of the device (its y axis) points; when the device stands upright, of where its back (−z)
    /// faces.
    static func heading(of q: Quaternion) -> Double {
        var v = q.rotate(Vector3(0, 1, 0))
        if v.x * v.x + v.y * v.y < 0.25 { v = q.rotate(Vector3(0, 0, -1)) }
        // Reference frame: x north, y west, z up; east is −y.
        var degrees = atan2(-v.y, v.x) * 180 / .pi
        if degrees < 0 { degrees += 360 }
        if degrees >= 360 { degrees -= 360 }
        return degrees
    }
}
