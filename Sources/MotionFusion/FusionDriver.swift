/// Feeds ``AttitudeFilter`` with samples of several sensors at their own rates: the one fusion driver
/// of live device motion (OpenCoreMotion's hub) and of `coremotion fuse`.
///
/// ## Rules
/// - **Time steps.** Each sensor is fed with the time since that sensor's own previous sample; its
///   first sample with ``AttitudeFilterParameters/nominalTimeStep``.
/// - **A time step ≤ 0** (a timestamp that does not increase for its sensor, such as a repeated row) or a
///   timestamp or value that is not finite: the sample is dropped. The filter does not see it, the
///   sensor's previous timestamp is kept, and it produces no update.
/// - **A gap** (a time step longer than ``AttitudeFilterParameters/maximumTimeStep``): the sample is fed
///   with that maximum step (the filter's own clamp): the gyroscope cannot tell what happened during
///   the gap, so at most that long is integrated and the corrections recover the rest.
/// - **Outputs.** One fused update per accepted gyroscope sample, once an accelerometer sample has been
///   accepted too: ``updateGyro(_:timestamp:)`` returns `true`, and ``estimate`` is the state after it.
///   Accelerometer and magnetometer samples update the state without an output of their own, so a
///   consumer sees device motion at the gyroscope's rate and never before both sensors have spoken.
///   Samples with equal timestamps should be fed accelerometer first, then gyroscope (then
///   magnetometer), so that the update at that instant sees its accelerometer sample: the order of the
///   simulator, of most drivers and of the recordings merge.
/// - **6D.** Without ``usesMagnetometer`` the magnetometer's samples are not fed at all.
///
/// O(1) per sample, no allocation. A value type: not shared between threads while mutated.
public struct FusionDriver: Sendable {
    /// The filter driven.
    public internal(set) var filter: AttitudeFilter
    @usableFromInline var lastAccelerometer = -Double.infinity
    @usableFromInline var lastGyro = -Double.infinity
    @usableFromInline var lastMagnetometer = -Double.infinity

    /// Creates a driver.
    /// - Parameters:
    ///   - parameters: the filter's tuning; default ``AttitudeFilterParameters/init()``.
    ///   - usesMagnetometer: 9D (`true`) or 6D.
    public init(parameters: AttitudeFilterParameters = AttitudeFilterParameters(), usesMagnetometer: Bool) {
        filter = AttitudeFilter(parameters: parameters, usesMagnetometer: usesMagnetometer)
    }

    /// The grade of a magnetometer calibration applied to the readings before they are fed (a stored
    /// ``SensorCalibration``): the filter's calibrator starts from it (``MagneticCalibrator/priorAccuracy``),
    /// so heading uses the field from the first sample. Default
    /// ``MagneticCalibrationAccuracy/uncalibrated``: the filter calibrates online only.
    public var priorMagneticAccuracy: MagneticCalibrationAccuracy {
        get { filter.state.calibrator.priorAccuracy }
        set { filter.state.calibrator.priorAccuracy = newValue }
    }

    /// 9D or 6D; may change between samples (the filter's state is kept).
    public var usesMagnetometer: Bool {
        get { filter.usesMagnetometer }
        set { filter.usesMagnetometer = newValue }
    }

    /// Whether an accelerometer and a gyroscope sample have both been accepted: outputs have begun.
    @inlinable
    public var hasStarted: Bool { lastAccelerometer > -Double.infinity && lastGyro > -Double.infinity }

    /// The filter's estimate after the latest sample.
    @inlinable
    public var estimate: AttitudeEstimate { filter.estimate }

    /// The time step for a sample at `t` of a sensor last seen at `last` (−∞: never), or `nil` to drop it.
    @inlinable @inline(__always)
    func timeStep(_ t: Double, after last: Double) -> Double? {
        guard t.isFinite, t > last else { return nil }
        return last == -Double.infinity ? filter.parameters.nominalTimeStep : t - last
    }

    /// Feeds an accelerometer sample (g, Core Motion sign) taken at `timestamp` (seconds).
    /// - Returns: whether the sample was accepted (see the type's rules).
    @discardableResult
    public mutating func updateAccelerometer(_ value: Vector3, timestamp: Double) -> Bool {
        guard value.isFinite, let dt = timeStep(timestamp, after: lastAccelerometer) else { return false }
        lastAccelerometer = timestamp
        filter.updateAccelerometer(value, dt: dt)
        return true
    }

    /// Feeds a magnetometer sample (µT, raw) taken at `timestamp` (seconds); ignored in 6D.
    /// - Returns: whether the sample was accepted.
    @discardableResult
    public mutating func updateMagnetometer(_ value: Vector3, timestamp: Double) -> Bool {
        guard filter.usesMagnetometer, value.isFinite,
              let dt = timeStep(timestamp, after: lastMagnetometer) else { return false }
        lastMagnetometer = timestamp
        filter.updateMagnetometer(value, dt: dt)
        return true
    }

    /// Feeds a gyroscope sample (rad/s) taken at `timestamp` (seconds).
    /// - Returns: `true` when this is a fused update: read ``estimate`` for the output at `timestamp`.
    public mutating func updateGyro(_ value: Vector3, timestamp: Double) -> Bool {
        guard value.isFinite, let dt = timeStep(timestamp, after: lastGyro) else { return false }
        lastGyro = timestamp
        filter.updateGyro(value, dt: dt)
        return lastAccelerometer > -Double.infinity
    }
}
