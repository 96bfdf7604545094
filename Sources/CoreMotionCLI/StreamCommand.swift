import ArgumentParser
import MotionMQTT
import Foundation
import MotionFusion
import MotionRecordingFormats
import OpenCoreMotion

/// Which stream `coremotion stream` writes.
enum StreamSensor: String, ExpressibleByArgument, CaseIterable {
    case accelerometer, gyro, magnetometer
    case deviceMotion = "device-motion"
    /// Every raw sensor the source has, interleaved: the layout `replay:` plays back as a device.
    case raw
}

struct StreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Write one sensor's samples, one per line, with their timestamps.",
        discussion: """
            CSV columns: accelerometer, gyro, magnetometer: timestamp,x,y,z (then a '# sensor=NAME' comment); \
            raw: timestamp,sensor,x,y,z; device-motion: see the README. Units: g, rad/s, µT, timestamps in \
            seconds since boot. A raw or one-sensor CSV can be played back with --source replay:PATH. Device motion \
            is in xArbitraryZVertical unless --reference-frame says otherwise.
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(help: "The stream to write: accelerometer, gyro, magnetometer, device-motion, or raw (all raw sensors).")
    var sensor: StreamSensor

    @Option(parsing: .unconditional, help: "Seconds between samples; clamped to what the source supports.", transform: OptionValue.seconds(allowZero: true))
    var interval: Double = 0.01

    @OptionGroup var durationOption: DurationOption
    var duration: Double? { durationOption.duration }

    @Option(help: "Line format: csv or jsonl.")
    var format: SampleFormat = .csv

    /// `--reference-frame` (default xArbitraryZVertical) and `--location`.
    @OptionGroup var frameOptions: ReferenceFrameOptions

    @Option(parsing: .unconditional, help: "Seconds a sample may wait so that samples are written in batches and the process wakes less often; 0 writes each at once (at most 1).", transform: OptionValue.seconds(0...1, allowZero: true))
    var latency: Double = 0.1

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var output: String?

    @Flag(name: .customLong("no-calibration"), help: "Ignore the device's stored calibration (see `coremotion calibrate`).")
    var noCalibration = false

    func validate() throws {
        _ = try frameOptions.coreMotionFrame()
    }

    func run() async throws {
        if noCalibration { DeviceCalibrationStore.processOverride.withLock { $0 = .off } }
        let source = try sourceOptions.resolve()
        if sensor == .raw, let broker = source as? MQTTSensorSource, broker.boundDevice == nil {
            return try await Self.streamDevices(broker, writer: try LineWriter(path: output), format: format, duration: duration)
        }
        // Read from several tasks: like Apple's, CMMotionManager is not `Sendable`, but it is callable from
        // any thread (its state is behind a lock).
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        manager.location = frameOptions.location?.location
        let writer = try LineWriter(path: output)
        let format = format
        let interval = interval
        let latency = latency
        let deadline = duration.map { ProcessInfo.processInfo.systemUptime + $0 }

        let failure = Locked<NSError?>(nil)
        // Each loop stops its own sensor as it ends, and the source is reconfigured after each stop, on the
        // hub's queue: the process exits once that is done (`run(arguments:)`).
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var loops = 0
                switch sensor {
                case .accelerometer, .gyro, .magnetometer:
                    if format == .csv {
                        writer.write(RawRecordingWriter.singleSensorHeader)
                        writer.write("# sensor=\(sensor.rawValue)")
                    }
                    let kind = sensor
                    group.addTask { try await Self.rawLoop(kind, manager, interval, writer, format, labelled: false, deadline, latency) }
                    loops = 1
                case .raw:
                    if format == .csv { writer.write(RawRecordingWriter.multiSensorHeader) }
                    let kinds: [StreamSensor] = [
                        manager.isAccelerometerAvailable ? .accelerometer : nil,
                        manager.isGyroAvailable ? .gyro : nil,
                        manager.isMagnetometerAvailable ? .magnetometer : nil,
                    ].compactMap { $0 }
                    for kind in kinds {
                        // A source failure reaches every loop after its last good sample: each loop runs to
                        // it, so every good row of every sensor is written before the error is reported.
                        group.addTask {
                            do {
                                try await Self.rawLoop(kind, manager, interval, writer, format, labelled: true, deadline, latency)
                            } catch let error as NSError where error.domain == CMErrorDomain {
                                failure.withLock { $0 = $0 ?? error }
                            }
                        }
                    }
                    loops = kinds.count
                case .deviceMotion:
                    if format == .csv { writer.write(DeviceMotionWriter.header) }
                    let frame = try frameOptions.coreMotionFrame() ?? .xArbitraryZVertical
                    let lineFormat: DeviceMotionWriter.Format = format == .csv ? .csv : .jsonl
                    group.addTask {
                        for try await motion in manager.deviceMotionUpdates(using: frame, interval: interval, maximumLatency: latency) {
                            if let deadline, motion.timestamp >= deadline { break }
                            writer.write(DeviceMotionWriter.line(FusedMotion(motion), format: lineFormat))
                        }
                    }
                    loops = 1
                }
                if let duration {
                    // The loops end on the first sample past the deadline. This timer is the backstop for
                    // a source that goes silent; it leaves a batch's worth of slack so that samples taken
                    // before the deadline are written. It is the only task ending with CancellationError.
                    group.addTask {
                        try await Task.sleep(nanoseconds: UInt64((duration + latency + 0.5) * 1e9))
                        throw CancellationError()
                    }
                }
                var finished = 0
                do {
                    while finished < loops, try await group.next() != nil { finished += 1 }
                } catch is CancellationError {}
                group.cancelAll()
                if let error = failure.withLock({ $0 }) { throw error }
            }
        } catch let error as NSError where error.domain == CMErrorDomain {
            writer.flush()
            throw CLIError(error.localizedDescription)
        }
        writer.flush()
    }

    private static func rawLoop(
        _ kind: StreamSensor, _ manager: CMMotionManager, _ interval: Double, _ writer: LineWriter,
        _ format: SampleFormat, labelled: Bool, _ deadline: Double?, _ latency: Double
    ) async throws {
        guard let sensor = SensorKind(rawValue: kind.rawValue) else { return }
        // MotionRecordingFormats' writer of the project's raw format, which replay: and fuse read back.
        let raw = RawRecordingWriter(encoding: format == .csv ? .csv : .jsonl, sensor: labelled ? nil : sensor)
        func emit(_ t: Double, _ x: Double, _ y: Double, _ z: Double) -> Bool {
            if let deadline, t >= deadline { return false }
            // The hub never delivers NaN or infinite values, the only samples the writer refuses.
            if let line = try? raw.line(RawSample(sensor: sensor, timestamp: t, value: Vector3(x, y, z))) {
                writer.write(String(line.dropLast()))
            }
            return true
        }
        switch kind {
        case .accelerometer:
            for try await d in manager.accelerometerUpdates(interval: interval, maximumLatency: latency) {
                guard emit(d.timestamp, d.acceleration.x, d.acceleration.y, d.acceleration.z) else { break }
            }
        case .gyro:
            for try await d in manager.gyroUpdates(interval: interval, maximumLatency: latency) {
                guard emit(d.timestamp, d.rotationRate.x, d.rotationRate.y, d.rotationRate.z) else { break }
            }
        case .magnetometer:
            for try await d in manager.magnetometerUpdates(interval: interval, maximumLatency: latency) {
                guard emit(d.timestamp, d.magneticField.x, d.magneticField.y, d.magneticField.z) else { break }
            }
        default:
            break
        }
    }
}
