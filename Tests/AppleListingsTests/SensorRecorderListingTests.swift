import Foundation
import MotionRecorderStore
import Testing
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif

@Suite struct SensorRecorderListingTests {
    init() { _ = simulatorSelected }

    @Test func theRecordedListIsEnumeratedWithTheSequenceExtension() throws {
        // The database CMSensorRecorder() uses, filled as `coremotion record` would.
        let path = NSTemporaryDirectory() + "cm-\(UUID().uuidString)-listing.sqlite"
        setenv("COREMOTION_RECORDER_DATABASE", path, 1)
        let base = Date().addingTimeInterval(-600)
        let store = try RecordingStore(location: .file(path))
        let batch = try store.insert((0..<40).map { k in
            AccelerometerReading(date: base.addingTimeInterval(Double(k) / 50), timestamp: 500 + Double(k) / 50, x: Double(k), y: 0, z: -1)
        })

        // From just before the first sample: (from, to] as CMSensorRecorder.h states.
        let samples = SensorRecorderListing().processSamples(from: base.addingTimeInterval(-0.001), to: base.addingTimeInterval(0.5))
        #expect(samples.map { $0.2 } == (0..<26).map(Double.init), "0 … 0.5 s, in order, through NSFastEnumerationIterator")
        #expect(samples.allSatisfy { $0.0 == batch && $0.4 == -1 })
        #expect(samples.first.map { abs($0.1.timeIntervalSince(base)) < 1e-6 } == true)
        #expect(CMSensorRecorder.isAccelerometerRecordingAvailable(), "the simulator has an accelerometer")
        #expect(CMSensorRecorder.authorizationStatus() == .authorized)
    }
}
