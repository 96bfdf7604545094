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
