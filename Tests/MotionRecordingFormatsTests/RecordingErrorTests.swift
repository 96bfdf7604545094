import MotionRecordingFormats
import Testing

@Suite struct RecordingErrorTests {
    @Test func descriptionNamesFileAndLine() {
        #expect(RecordingError("'abc' is not a number", path: "rec.csv", line: 42).description == "rec.csv:42: 'abc' is not a number")
        #expect(RecordingError("empty recording", path: "rec.csv").description == "rec.csv: empty recording")
        #expect(RecordingError("no input").description == "no input")
    }
}
