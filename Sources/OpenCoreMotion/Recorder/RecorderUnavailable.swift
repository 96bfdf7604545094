#if !Recorder
import Foundation
import MotionSources

// OpenCoreMotion built without its `Recorder` trait links no SQLite store (MotionRecorderStore, GRDB).
// `CMSensorRecorder` keeps its API: it records nothing (the reason is logged) and has no data, so
// `CMPedometer` has no history. These stand-ins have the shape of the store's API that
// `CMSensorRecorder` and `CMPedometer` use.

/// The store's error without the store.
struct RecorderUnavailable: Error, CustomStringConvertible {
    var description: String { "OpenCoreMotion was built without its Recorder trait: no recording store" }
}

@usableFromInline
enum RecordingStore {
    /// No store: an empty path, which no file answers to.
    @usableFromInline
    static func defaultPath() -> String { "" }
}

enum AccelerometerRecording {
    /// Apple's longest recording, 12 hours, in seconds.
    static let maximumDuration: TimeInterval = 12 * 3600

    static func clamp(_ duration: TimeInterval) -> TimeInterval {
        guard duration > 0 else { return 0 }
        return min(duration, maximumDuration)
    }
}

enum RecordedSensor {
    case accelerometer
    case rotationRate
    case pressure
}

enum ActiveRecordings {
    struct Store {
        struct Reading { var date: Date; var x, y, z, timestamp: Double }
        struct Sample { var identifier: UInt64; var reading: Reading }
        func samples(from: Date, to: Date, sensor: RecordedSensor = .accelerometer) throws(RecorderUnavailable) -> [Sample] {
            throw RecorderUnavailable()
        }
        struct PressureReading { var date: Date; var pressure, timestamp: Double; var temperature: Double? }
        struct PressureSample { var identifier: UInt64; var reading: PressureReading }
        func pressureSamples(from: Date, to: Date) throws(RecorderUnavailable) -> [PressureSample] {
            throw RecorderUnavailable()
        }
    }

    static func recordPressure(
        barometer: any BarometerSource, databasePath: String, duration: TimeInterval
    ) throws(RecorderUnavailable) {
        throw RecorderUnavailable()
    }

    static func record(
        source: any SensorSource, databasePath: String, duration: TimeInterval, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderUnavailable) {
        throw RecorderUnavailable()
    }

    static func store(at path: String) throws(RecorderUnavailable) -> Store { throw RecorderUnavailable() }

    static func isRecording(databasePath: String, sensor: RecordedSensor = .accelerometer) -> Bool { false }
}
#endif
