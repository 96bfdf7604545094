import ArgumentParser
import Foundation
import OpenCoreMotion

/// Which batches `coremotion batches` prints.
enum BatchedSensor: String, ExpressibleByArgument, CaseIterable {
    case accelerometer
    case deviceMotion = "device-motion"
}

/// `coremotion batches`: CMBatchedSensorManager's batches, one summary line each.
struct BatchesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batches",
        abstract: "Print CMBatchedSensorManager's batches (about one second of samples each), one line per batch.",
        discussion: """
            Reads the batches through CMBatchedSensorManager's async sequence, as an iOS app does, at the \
            manager's accelerometerDataFrequency (deviceMotionDataFrequency): Apple's 800 Hz (200 Hz), or the \
            source's highest rate when lower. First a comment '# SENSOR batches at N Hz', then CSV columns: \
            batch (from 1), count, first and last timestamp (seconds since boot), min_step and max_step (the \
            smallest and largest gap between consecutive samples, s), and the batch's mean x,y,z in g \
            (acceleration; gravity for device-motion). The partial batch at the end is not printed. Without --count or \
            --duration it runs until interrupted (a recording that ends leaves the manager waiting, as a sensor that stops does).
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(help: "The batches to read: accelerometer or device-motion.")
    var sensor: BatchedSensor = .accelerometer

    @Option(parsing: .unconditional, help: "Stop after this many batches (at least 1).", transform: OptionValue.count())
    var count: Int?

    @OptionGroup var durationOption: DurationOption

    func run() async throws {
        let source = try sourceOptions.resolve()
        let manager = CMBatchedSensorManager(source: source)
        let frequency = sensor == .accelerometer ? manager.accelerometerDataFrequency : manager.deviceMotionDataFrequency
        guard frequency > 0 else {
            throw CLIError("\(source.info.name) has no \(sensor == .accelerometer ? "accelerometer" : "accelerometer and gyroscope"): no \(sensor.rawValue) batches")
        }
        let limit = count
        let sensor = sensor
        StandardOutput.write("# \(sensor.rawValue) batches at \(frequency) Hz\n\(CMBatchSummary.csvHeader)\n")
        let accelerometer = manager.accelerometerUpdates(), deviceMotion = manager.deviceMotionUpdates()
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var index = 0
                    /// Prints the batch's line; whether to go on.
                    func emit(_ summary: CMBatchSummary?) -> Bool {
                        guard let summary else { return true }
                        index += 1
                        StandardOutput.write(summary.csvLine(index: index) + "\n")
                        return limit.map { index < $0 } ?? true
                    }
                    switch sensor {
                    case .accelerometer:
                        for try await batch in accelerometer where !emit(CMBatchSummary(accelerometer: batch)) { break }
                    case .deviceMotion:
                        for try await batch in deviceMotion where !emit(CMBatchSummary(deviceMotion: batch)) { break }
                    }
                }
                if let duration = durationOption.duration {
                    group.addTask {
                        try await Task.sleep(nanoseconds: UInt64(duration * 1e9))  // safe: OptionValue.seconds() bounds it to 1 ns…maximumSeconds
                        throw CancellationError()
                    }
                }
                do {
                    _ = try await group.next()
                } catch is CancellationError {}
                group.cancelAll()
            }
        } catch let error as NSError where error.domain == CMErrorDomain {
            throw CLIError(error.localizedDescription)
        }
    }
}
