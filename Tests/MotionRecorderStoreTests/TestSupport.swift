import Foundation
@testable import MotionRecorderStore

/// A fresh database path in the temporary folder (the file does not exist yet).
func temporaryDatabase(_ name: String = "rec") -> String {
    NSTemporaryDirectory() + "cm-\(UUID().uuidString)-\(name).sqlite"
}

/// A reading whose date is `t` seconds after `base` and whose timestamp is `t`.
func reading(_ t: Double, base: Date = Date(), x: Double = 0, y: Double = 0, z: Double = -1) -> AccelerometerReading {
    AccelerometerReading(date: base.addingTimeInterval(t), timestamp: t, x: x, y: y, z: z)
}

/// Every sample of the store, whatever its date.
func everything(_ store: RecordingStore) throws -> [StoredAccelerometerSample] {
    try store.samples(from: Date(timeIntervalSince1970: 0), to: Date.distantFuture)
}
