import Foundation

/// What one batch of ``CMBatchedSensorManager`` holds, in a line: its sample count, the first and
/// last timestamps, the smallest and largest step between consecutive timestamps, and the mean
/// vector (acceleration for accelerometer batches, gravity for device-motion batches, in g).
///
/// `coremotion batches` prints one per batch (``csvHeader``, ``csvLine(index:)``); tests read them
/// back. A step of 0 or less (``minimumStep``) means the batch is not in strictly increasing time.
package struct CMBatchSummary: Sendable, Equatable {
    /// Samples in the batch.
    package var count: Int
    /// The first sample's timestamp, seconds since boot.
    package var first: TimeInterval
    /// The last sample's timestamp, seconds since boot.
    package var last: TimeInterval
    /// The smallest difference between consecutive timestamps, seconds; 0 for a single sample.
    package var minimumStep: TimeInterval
    /// The largest difference between consecutive timestamps, seconds; 0 for a single sample.
    package var maximumStep: TimeInterval
    /// The mean vector's x, y and z, g.
    package var mean: (x: Double, y: Double, z: Double)

    /// The summary of an accelerometer batch (mean acceleration); `nil` for an empty batch.
    package init?(accelerometer batch: [CMAccelerometerData]) {
        self.init(batch.map { ($0.timestamp, $0.acceleration.x, $0.acceleration.y, $0.acceleration.z) })
    }

    /// The summary of a device-motion batch (mean gravity); `nil` for an empty batch.
    package init?(deviceMotion batch: [CMDeviceMotion]) {
        self.init(batch.map { ($0.timestamp, $0.gravity.x, $0.gravity.y, $0.gravity.z) })
    }

    private init?(_ samples: [(t: Double, x: Double, y: Double, z: Double)]) {
        guard let head = samples.first, let tail = samples.last else { return nil }
        count = samples.count
        first = head.t
        last = tail.t
        let steps = zip(samples.dropFirst(), samples).map { $0.t - $1.t }
        minimumStep = steps.min() ?? 0
        maximumStep = steps.max() ?? 0
        let n = Double(samples.count)
        mean = (samples.reduce(0) { $0 + $1.x } / n, samples.reduce(0) { $0 + $1.y } / n, samples.reduce(0) { $0 + $1.z } / n)
    }

    /// The CSV columns of ``csvLine(index:)``.
    package static let csvHeader = "batch,count,first,last,min_step,max_step,x,y,z"

    /// The batch as one CSV row: its 1-based `index`, count, timestamps and steps (6 decimals:
    /// microseconds), mean (6 decimals).
    package func csvLine(index: Int) -> String {
        String(format: "%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f",
               index, count, first, last, minimumStep, maximumStep, mean.x, mean.y, mean.z)
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.count == b.count && a.first == b.first && a.last == b.last && a.minimumStep == b.minimumStep
            && a.maximumStep == b.maximumStep && a.mean == b.mean
    }
}
