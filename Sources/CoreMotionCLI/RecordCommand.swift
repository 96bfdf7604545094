import ArgumentParser
import Foundation
import MotionMQTT
import MotionRecorderStore
import OpenCoreMotion

/// `coremotion record`: the recording daemon of `CMSensorRecorder`.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the accelerometer at 50 Hz into the CMSensorRecorder database.",
        discussion: """
            Records until --duration (at most 12 hours, as Apple's recorder), Ctrl-C or the end of a recording \
            source, then prints one summary line. Samples are kept 3 days. Apps read them with \
            CMSensorRecorder.accelerometerData(from:to:), and `coremotion recorded` prints them. \
            From mqtt://HOST:PORT/FILTER (no device=), every device is recorded in its own session, source \
            'mqtt://HOST:PORT/FILTER?device=ID' (see `recorded --sessions`, `recorded --source`).
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(parsing: .unconditional, help: "Stop after this many seconds of samples (default and maximum: 12 hours).", transform: OptionValue.seconds(0...AccelerometerRecording.maximumDuration))
    var duration: Double?

    @OptionGroup var database: RecorderDatabaseOption

    func run() async throws {
        let source = try sourceOptions.resolve()
        guard source.info.sensors[.accelerometer] != nil else {
            throw CLIError("\(source.info.identifier) has no accelerometer")
        }
        let path = database.path
        if let broker = source as? MQTTSensorSource, broker.boundDevice == nil {
            let store: RecordingStore
            do { store = try RecordingStore(location: .file(path)) } catch { throw CLIError(error.description) }
            return try await Self.recordDevices(broker, store: store, path: path, duration: duration ?? AccelerometerRecording.maximumDuration)
        }
        let recording: AccelerometerRecording
        do {
            let store = try RecordingStore(location: .file(path))
            recording = try AccelerometerRecording(
                store: store, source: source.info.identifier, duration: duration ?? AccelerometerRecording.maximumDuration
            )
        } catch {
            throw CLIError(error.description)
        }
        // Read from several tasks: like Apple's, CMMotionManager is not `Sendable`, but it is callable from
        // any thread (its state is behind a lock).
        nonisolated(unsafe) let manager = CMMotionManager(source: source)
        let stop = StopSignals()
        defer { stop.cancel() }
        var failure: (any Error)?
        await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                do {
                    for try await d in manager.accelerometerUpdates(interval: 1 / AccelerometerRecording.rate, maximumLatency: 0.1) {
                        let a = d.acceleration
                        guard try recording.receive(timestamp: d.timestamp, x: a.x, y: a.y, z: a.z) else { break }
                    }
                    return nil
                } catch {
                    return error
                }
            }
            group.addTask {
                await stop.wait()
                return nil
            }
            // A source that goes silent: give up a little after the duration.
            let limit = recording.duration + 2
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(limit * 1e9))  // safe: the recording clamps its duration to 0…12 h
                return nil
            }
            failure = await group.next() ?? nil
            group.cancelAll()
        }
        var closeError: RecorderError?
        do { try recording.finish() } catch { closeError = error }
        let writer = recording.writer
        let skipped = writer.skippedCount > 0 ? ", \(writer.skippedCount) skipped (not finite)" : ""
        print("recorded \(writer.writtenCount) accelerometer samples at 50 Hz from \(source.info.identifier) into \(path)\(skipped)")
        if let closeError { throw CLIError(closeError.description) }
        if let error = failure as? RecorderError { throw CLIError(error.description) }
        if let error = failure as NSError?, error.domain == CMErrorDomain { throw CLIError(error.localizedDescription) }
        if let failure { throw CLIError(String(describing: failure)) }
    }
}

/// SIGINT and SIGTERM as an awaitable event, so that `record` writes its last batch and its summary.
final class StopSignals: @unchecked Sendable {
    // Sendable: Dispatch's signal sources are not marked Sendable, though Dispatch documents them as
    // thread-safe; they are only created in `init` and cancelled in `cancel()`.
    private let sources: [DispatchSourceSignal]
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream<Void>.makeStream()
        let continuation = continuation
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
    }

    /// Returns at the first signal, or when the task is cancelled.
    func wait() async {
        for await _ in stream { return }
    }

    /// Stops listening and restores the default handlers.
    func cancel() {
        continuation.finish()
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
