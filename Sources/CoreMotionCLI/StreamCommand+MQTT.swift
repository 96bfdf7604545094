import Foundation
import MotionMQTT
import OpenCoreMotion

extension StreamCommand {
    /// `stream --sensor raw --source mqtt://…` without `device=`: every device's samples, with a device
    /// column (`timestamp,device,sensor,x,y,z`; jsonl adds `"device"`). Devices that appear or fall silent
    /// are reported on stderr; refused credentials end the command with status 1.
    static func streamDevices(_ broker: MQTTSensorSource, writer: LineWriter, format: SampleFormat, duration: Double?) async throws {
        if format == .csv { writer.write("timestamp,device,sensor,x,y,z") }
        let (fatal, continuation) = AsyncStream<String?>.makeStream()
        broker.startDevices { event in
            switch event {
            case .sample(let d):
                let s = d.sample
                switch format {
                case .csv:
                    writer.write("\(s.timestamp),\(csvField(d.device)),\(s.sensor.rawValue),\(s.value.x),\(s.value.y),\(s.value.z)")
                case .jsonl:
                    writer.write("{\"timestamp\":\(s.timestamp),\"device\":\(jsonString(d.device)),\"sensor\":\"\(s.sensor.rawValue)\",\"x\":\(s.value.x),\"y\":\(s.value.y),\"z\":\(s.value.z)}")
                }
            case .appeared(let id): printError("\(broker.url): device \(id) appeared")
            case .silent(let id): printError("\(broker.url): device \(id) sent nothing for \(broker.silence) s")
            case .malformed(let topic, let reason): printError("\(broker.url): message on \(topic) skipped: \(reason)")
            case .broker(let text, let isFatal): if isFatal { continuation.yield(text) }
            case .subscribed: break
            }
        }
        if let duration {
            Task {
                try? await Task.sleep(nanoseconds: UInt64(duration * 1e9))  // safe: --duration is validated (≤ 1e8 s)
                continuation.yield(nil)
            }
        }
        var failure: String?
        for await e in fatal {
            failure = e
            break
        }
        await broker.stopDevices()
        writer.flush()
        if let failure { throw CLIError(failure) }
    }
}

func csvField(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default:
            if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}
