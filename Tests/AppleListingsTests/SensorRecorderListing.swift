// The usual Swift form of the example in Apple's CMSensorRecorder and CMSensorDataList reference
// (record 20 minutes, then enumerate the list), with the `Sequence` extension Swift apps add to
// CMSensorDataList themselves. Re-typed with only the import switched; Swift 5 mode, like the others.
#if canImport(CoreMotion)
import CoreMotion
#else
import OpenCoreMotion
#endif
import Foundation

extension CMSensorDataList: Sequence {
    public typealias Iterator = NSFastEnumerationIterator
    public func makeIterator() -> NSFastEnumerationIterator {
        return NSFastEnumerationIterator(self)
    }
}

/// Listing: record the accelerometer, later enumerate what was recorded.
final class SensorRecorderListing {
    func startRecording() {
        if CMSensorRecorder.isAccelerometerRecordingAvailable() {
            let recorder = CMSensorRecorder()
            recorder.recordAccelerometer(forDuration: 20 * 60)  // Record for 20 minutes
        }
    }

    func processSamples(from start: Date, to end: Date) -> [(UInt64, Date, Double, Double, Double)] {
        var samples: [(UInt64, Date, Double, Double, Double)] = []
        let recorder = CMSensorRecorder()
        if let list = recorder.accelerometerData(from: start, to: end) {
            for data in list {
                if let accData = data as? CMRecordedAccelerometerData {
                    // Process the data.
                    samples.append((accData.identifier, accData.startDate,
                                    accData.acceleration.x, accData.acceleration.y, accData.acceleration.z))
                }
            }
        }
        return samples
    }
}
