import Foundation
import MotionSources

/// One kind of update a consumer can ask a hub for.
enum MotionStream: Hashable, Sendable {
    case accelerometer
    case gyro
    case magnetometer
    case deviceMotion(CMAttitudeReferenceFrame)

    /// The raw sensor behind a raw stream; `nil` for device motion.
    var rawSensor: SensorKind? {
        switch self {
        case .accelerometer: .accelerometer
        case .gyro: .gyro
        case .magnetometer: .magnetometer
        case .deviceMotion: nil
        }
    }

    /// Whether device motion in this frame needs the magnetometer.
    var usesMagnetometer: Bool {
        if case .deviceMotion(let frame) = self { return frame != .xArbitraryZVertical }
        return false
    }
}

/// What a hub hands a consumer.
enum HubOutput: @unchecked Sendable {
    // Sendable: the samples are created by the hub for this output and are immutable (their stored state
    // is `let`); Core Motion's sample classes are not `Sendable` (see Unchecked.swift).
    case accelerometer(CMAccelerometerData)
    case gyro(CMGyroData)
    case magnetometer(CMMagnetometerData)
    case deviceMotion(CMDeviceMotion)
    /// The source failed: updates have stopped for this consumer, which the hub has removed.
    case failure(NSError)
    /// A notice that does not stop updates, such as `CMErrorDeviceRequiresMovement` or a source's
    /// interruption (``SourceEvent/interrupted(_:)``); async sequences skip it.
    case notice(NSError)
    /// The source ran out of data (a recording ended).
    case finished
}

/// How a consumer wants its updates.
struct ConsumerSpec: Sendable {
    var stream: MotionStream
    /// Seconds between updates, already clamped to the source.
    var interval: Double
    /// Degrees east of true north of magnetic north, for ``CMAttitudeReferenceFrame/xTrueNorthZVertical``.
    var declination: Double = 0
    /// Whether to send `CMErrorDeviceRequiresMovement` when calibration needs movement.
    var showsDeviceMovementDisplay = false
    /// Seconds a sample may wait so the source can deliver several at once; 0 for Apple's APIs.
    var maximumLatency = 0.0
    /// Called on the source's thread; must not block.
    var deliver: @Sendable (HubOutput) -> Void
}

extension SourceError {
    /// The error as Core Motion reports it, in ``CMErrorDomain``.
    var coreMotionError: NSError {
        let code: CMError
        switch kind {
        case .unavailable, .deviceRemoved: code = CMErrorNotAvailable
        case .permissionDenied: code = CMErrorNotAuthorized
        case .malformedInput, .timestampRegression, .io: code = CMErrorUnknown
        }
        return NSError.coreMotion(code, description, path: path, line: line)
    }
}
