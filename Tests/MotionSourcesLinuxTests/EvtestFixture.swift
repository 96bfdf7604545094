import Foundation
@testable import MotionSourcesLinux

/// Reads `evtest` output (the fixture dumps) into an identity and an event list.
enum Evtest {
    /// Parses the device header that starts at the line `Input device name: "<name>"` (the first one
    /// when `name` is nil) up to `Testing ...`, and the `Event:` lines after it.
    static func parse(_ text: String, name: String? = nil, path: String) -> (EvdevIdentity, [InputEvent]) {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        var start = 0
        for (i, l) in lines.enumerated() where l.hasPrefix("Input device name:") && (name == nil || l.contains("\"\(name!)\"")) { start = i; break }
        var identity = EvdevIdentity(path: path, name: "", axes: [:])
        // The ID line comes just before the name line.
        if start > 0, let idLine = lines[start - 1].range(of: "Input device ID: ") {
            let parts = lines[start - 1][idLine.upperBound...].split(separator: " ")
            func hex(_ key: String) -> UInt16 {
                guard let i = parts.firstIndex(of: Substring(key)), i + 1 < parts.count else { return 0 }
                return UInt16(parts[i + 1].dropFirst(2), radix: 16) ?? 0
            }
            identity.bus = hex("bus"); identity.vendor = hex("vendor"); identity.product = hex("product"); identity.version = hex("version")
        }
        identity.name = String(lines[start].split(separator: "\"")[1])
        var code: UInt16?
        var info = [String: Int32]()
        func flush() {
            if let c = code {
                identity.axes[c] = EvdevAbsInfo(value: info["Value"] ?? 0, minimum: info["Min"] ?? 0, maximum: info["Max"] ?? 0,
                                                fuzz: info["Fuzz"] ?? 0, flat: info["Flat"] ?? 0, resolution: info["Resolution"] ?? 0)
            }
            code = nil; info = [:]
        }
        var events: [InputEvent] = []
        var inAbs = false
        for l in lines[(start + 1)...] {
            let t = l.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("Input device name:") { break }
            if t.hasPrefix("Event type") { flush(); inAbs = t.contains("(EV_ABS)"); continue }
            if t.hasPrefix("Event code"), inAbs {
                flush()
                code = UInt16(t.split(separator: " ")[2])
                continue
            }
            if code != nil, let key = t.split(separator: " ").first, ["Value", "Min", "Max", "Fuzz", "Flat", "Resolution"].contains(String(key)) {
                info[String(key)] = Int32(t.split(separator: " ").last!)
                continue
            }
            if t.hasPrefix("Property type") { flush(); identity.properties.insert(Int(t.split(separator: " ")[2])!); continue }
            if t.hasPrefix("Event: time") {
                flush()
                let fields = t.dropFirst("Event: time ".count).components(separatedBy: ", ")
                let time = Double(fields[0])!
                if t.contains("SYN_REPORT") {
                    events.append(InputEvent(time: time, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0))
                } else if fields.count == 4 {
                    func num(_ f: String) -> Int { Int(f.split(separator: " ")[1])! }
                    events.append(InputEvent(time: time, type: UInt16(num(fields[1])), code: UInt16(num(fields[2])), value: Int32(num(fields[3]))))
                }
            }
        }
        flush()
        return (identity, events)
    }

    static func joycon() throws -> (EvdevIdentity, [InputEvent]) {
        parse(try Fixtures.text("evdev-gamepads/joycon-left-imu_evtest-stream.txt"), path: "/dev/input/event7")
    }

    static func dualshock4() throws -> EvdevIdentity {
        parse(try Fixtures.text("evdev-gamepads/Kudesnick-hid-sony_README.md"), name: "Wireless Controller Motion Sensors", path: "/dev/input/event2").0
    }

    static func dualshock3() throws -> EvdevIdentity {
        parse(try Fixtures.text("evdev-gamepads/Kudesnick-hid-sony_README.md"), name: "Sony PLAYSTATION(R)3 Controller Motion Sensors", path: "/dev/input/event1").0
    }
}
