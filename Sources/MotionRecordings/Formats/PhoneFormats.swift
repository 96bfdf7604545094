enum SensorLoggerReader {
    static func hasSensorFile(_ c: Container) -> Bool {
        c.entries.contains { ["accelerometeruncalibrated.csv", "accelerometer.csv", "gyroscope.csv", "gyroscopeuncalibrated.csv", "totalacceleration.csv"].contains($0.baseName.lowercased()) }
    }
    static func open(_ c: Container) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        throw RecordingError("Sensor Logger reader: in progress", path: c.displayPath)
    }
}
enum SensorLogReader {
    static func open(_ e: Container.Entry) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        throw RecordingError("SensorLog reader: in progress", path: e.displayPath)
    }
}
enum PhyphoxReader {
    static func open(_ c: Container) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        throw RecordingError("phyphox reader: in progress", path: c.displayPath)
    }
}
enum HyperIMUReader {
    static func open(_ e: Container.Entry) throws(RecordingError) -> ([any SampleStream], [String: String]) {
        throw RecordingError("HyperIMU reader: in progress", path: e.displayPath)
    }
}
