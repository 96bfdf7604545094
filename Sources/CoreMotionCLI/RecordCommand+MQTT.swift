import Foundation
import MotionMQTT
import MotionRecorderStore
import MotionSources
import NIOConcurrencyHelpers

extension RecordCommand {
    /// `record --source mqtt://…` without `device=`: every device of the broker is recorded, each in its
    /// own session whose source is `URL?device=ID` (the identifier the same URL with `?device=ID` has), so
    /// `recorded --sessions` lists one session per device and `recorded --source 'URL?device=ID'` reads
    /// one back. Each device's accelerometer is thinned to 50 Hz by its own timestamps. The command ends
    /// after `duration` seconds (of this machine's clock; each device's session lasts what is left of it
    /// from its first sample), at SIGINT or SIGTERM, or with status 1 when the broker refuses the
    /// credentials or a write fails.
    static func recordDevices(_ broker: MQTTSensorSource, store: RecordingStore, path: String, duration: Double) async throws {
        let deadline = ProcessInfo.processInfo.systemUptime + AccelerometerRecording.clamp(duration)
        let recordings = NIOLockedValueBox<[String: AccelerometerRecording]>([:])
        let order = NIOLockedValueBox<[String]>([])
        let (fatal, continuation) = AsyncStream<String?>.makeStream()
        broker.startDevices(SensorDemand(rates: [.accelerometer: AccelerometerRecording.rate])) { event in
            switch event {
            case .sample(let d):
                guard d.sample.sensor == .accelerometer else { return }
                let result: Result<AccelerometerRecording, RecorderError> = recordings.withLockedValue { all in
                    if let r = all[d.device] { return .success(r) }
                    let remaining = max(deadline - ProcessInfo.processInfo.systemUptime, 0)
                    do throws(RecorderError) {
                        let r = try AccelerometerRecording(store: store, source: deviceSource(broker, d.device), duration: remaining)
                        all[d.device] = r
                        order.withLockedValue { $0.append(d.device) }
                        return .success(r)
                    } catch {
                        return .failure(error)
                    }
                }
                do {
                    let v = d.sample.value
                    try result.get().receive(timestamp: d.sample.timestamp, x: v.x, y: v.y, z: v.z)
                } catch {
                    continuation.yield(String(describing: error))
                }
            case .appeared(let id): printError("\(broker.url): device \(id) appeared; recording it as \(deviceSource(broker, id))")
            case .silent(let id): printError("\(broker.url): device \(id) sent nothing for \(broker.silence) s")
            case .malformed(let topic, let reason): printError("\(broker.url): message on \(topic) skipped: \(reason)")
            case .broker(let text, let isFatal): if isFatal { continuation.yield(text) }
            case .subscribed: break
            }
        }
        let stop = StopSignals()
        defer { stop.cancel() }
        let limit = max(deadline - ProcessInfo.processInfo.systemUptime, 0) + 1
        Task {
            try? await Task.sleep(nanoseconds: UInt64(limit * 1e9))  // safe: clamped to 0…12 h + 1 s above
            continuation.yield(nil)
        }
        Task {
            await stop.wait()
            continuation.yield(nil)
        }
        var failure: String?
        for await e in fatal {
            failure = e
            break
        }
        await broker.stopDevices()
        var closeError: RecorderError?
        let devices = order.withLockedValue { $0 }
        let all = recordings.withLockedValue { $0 }
        var counts: [String] = []
        var total = 0
        var skipped = 0
        for id in devices {
            guard let r = all[id] else { continue }
            do { try r.finish() } catch { closeError = closeError ?? error }
            total += r.writer.writtenCount
            skipped += r.writer.skippedCount
            counts.append("\(id): \(r.writer.writtenCount)")
        }
        let skippedText = skipped > 0 ? ", \(skipped) skipped (not finite)" : ""
        let list = counts.isEmpty ? "" : " (\(counts.joined(separator: ", ")))"
        print("recorded \(total) accelerometer samples at 50 Hz from \(devices.count) device\(devices.count == 1 ? "" : "s") of \(broker.url) into \(path)\(list)\(skippedText)")
        if let closeError { throw CLIError(closeError.description) }
        if let failure { throw CLIError(failure) }
    }

    /// The session source of one device: the broker URL (no password) with `?device=ID`, as the source
    /// `mqtt://…?device=ID` names itself.
    static func deviceSource(_ broker: MQTTSensorSource, _ device: String) -> String {
        "\(broker.url)?device=\(device)"
    }
}
