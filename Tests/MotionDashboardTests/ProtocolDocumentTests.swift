import Foundation
import MotionFusion
import Testing
@testable import MotionDashboard

/// `PROTOCOL.md` against the schema in `DashboardMessages.swift`: every message type the server can
/// send has a section, and every field and column an example of it carries is named there.
@Suite struct ProtocolDocumentTests {
    static func document() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("Sources/MotionDashboard/PROTOCOL.md"), encoding: .utf8)
    }

    /// A machine whose source offers every stream and has heard two devices.
    static func machine() -> DashboardHubStateMachine {
        var streams: [DashboardSensor: DashboardSourceDescription.Stream] = [:]
        for sensor in DashboardSensor.allCases { streams[sensor] = .init(minimumRate: 1, maximumRate: 100, range: 8) }
        var m = DashboardHubStateMachine(
            source: DashboardSourceDescription(
                identifier: "test:all", name: "Every stream", streams: streams,
                referenceFrames: ["xArbitraryZVertical"], details: [("kind", "test")]),
            outboxCapacity: 64, pendingCapacity: 100)
        _ = m.connect()
        _ = m.ingest(.devices([DashboardDevice(id: "a"), DashboardDevice(id: "b", silent: true)], selected: "a"))
        return m
    }

    /// One sample of every stream.
    static let everySample: [DashboardSample] = DashboardSensor.allCases.map { sensor in
        switch sensor {
        case .accelerometer, .gyro, .magnetometer:
            DashboardSample(sensor: sensor, timestamp: 1, vector: Vector3(0, 0, -1))
        case .deviceMotion:
            DashboardSample(timestamp: 1, deviceMotion: DashboardDeviceMotion(
                roll: 0.1, pitch: -0.2, yaw: 0.3, quaternion: Quaternion(w: 1, x: 0, y: 0, z: 0),
                gravity: Vector3(0, 0, -1), userAcceleration: Vector3(0, 0, 0), rotationRate: Vector3(0, 0, 0.5),
                magneticField: Vector3(20, 0, -40), magneticFieldAccuracy: 2, heading: 42.5))
        case .pedometer:
            DashboardSample(timestamp: 1, pedometer: DashboardPedometer(steps: 12, distance: 8.4, cadence: 1.9, pace: 0.75))
        case .altitude:
            DashboardSample(timestamp: 1, altitude: DashboardAltitude(relativeAltitude: 3.1, pressure: 101.2))
        case .activity:
            DashboardSample(timestamp: 1, activity: DashboardActivity(activity: "walking", confidence: 2))
        }
    }

    /// An example of each message type; the switch makes a new type fail to compile until it has one.
    static func example(_ kind: DashboardServerMessage.Kind) -> DashboardServerMessage {
        let m = machine()
        switch kind {
        case .hello: return .hello(m.hello)
        case .state: return .state(m.state)
        case .samples:
            var rows: [DashboardSensor: [DashboardSample]] = [:]
            for s in everySample { rows[s.sensor] = [s] }
            return .samples(.init(seq: 1, rows: rows))
        case .ack: return .ack(.init(request: "interval", id: .integer(7)))
        case .error:
            return .error(.init(DashboardControlError(code: .outOfRange, message: "no", request: "interval", id: .string("x"))))
        case .sourceError: return .sourceError(.init(sensor: Nullable("gyro"), message: "gone"))
        }
    }

    /// The text of the `###` section whose heading names `kind` in backticks.
    static func section(_ kind: String, in doc: String) -> String? {
        var out: [Substring] = []
        var inside = false
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                inside = line.hasPrefix("### ") && line.contains("`\(kind)`")
                continue
            }
            if inside { out.append(line) }
        }
        return out.isEmpty ? nil : out.joined(separator: "\n")
    }

    /// Every key of every object in `value`, recursively.
    static func keys(_ value: Any) -> Set<String> {
        if let d = value as? [String: Any] {
            return d.reduce(into: Set(d.keys)) { $0.formUnion(keys($1.value)) }
        }
        if let a = value as? [Any] { return a.reduce(into: Set<String>()) { $0.formUnion(keys($1)) } }
        return []
    }

    @Test(arguments: DashboardServerMessage.Kind.allCases)
    func everyMessageAndFieldIsDocumented(kind: DashboardServerMessage.Kind) throws {
        let doc = try Self.document()
        let section = try #require(Self.section(kind.rawValue, in: doc), "PROTOCOL.md has no section for `\(kind.rawValue)`")
        let message = Self.example(kind)
        #expect(message.kind == kind)
        let object = json(message.text)
        #expect(object["type"] as? String == kind.rawValue)
        for key in Self.keys(object).sorted() {
            #expect(section.contains("\"\(key)\""), "PROTOCOL.md's `\(kind.rawValue)` section does not show the field \"\(key)\"")
        }
    }

    @Test func everyColumnIsDocumentedAndEveryRowMatchesItsColumns() throws {
        let hello = try #require(Self.section("hello", in: try Self.document()))
        let samples = json(Self.example(.samples).text)
        for sensor in DashboardSensor.allCases {
            for column in sensor.columns {
                #expect(hello.contains("\"\(column)\""), "column \(column) of \(sensor) is not in hello's example")
            }
            let rows = try #require(samples[sensor.rawValue] as? [[Any]], "\(sensor)")
            #expect(rows.first?.count == sensor.columns.count, "\(sensor): a row has one value per column")
        }
    }

    @Test func typeComesFirstAndNumbersAreRounded() throws {
        let text = DashboardServerMessage.samples(.init(seq: 3, rows: [
            .gyro: [DashboardSample(sensor: .gyro, timestamp: 12.345_678_9, vector: Vector3(.nan, 1e-9, -0.000_000_4))],
        ])).text
        #expect(text == #"{"type":"samples","seq":3,"gyro":[[12.345679,null,0,0]]}"#)
        let hello = DashboardServerMessage.hello(Self.machine().hello).text
        #expect(hello.hasPrefix(#"{"type":"hello","protocol":1,"source":{"identifier":"test:all""#))
        #expect(hello == DashboardServerMessage.hello(Self.machine().hello).text, "dictionaries are written sorted")
        #expect(hello.contains(#""units":{"accelerometer":"g","attitude":"rad","cadence":"steps/s""#))
    }
}

/// The streaming JSON writer against Foundation's parser, on shapes the schema does not use yet.
@Suite struct DashboardJSONEncoderTests {
    struct Inner: Encodable { var a: [Int?]; var b: String }
    struct Outer: Encodable {
        var s = "quote \" backslash \\ newline \n tab \t bell \u{7} é 😀"
        var n = [1.5, -2, 1e20, 0.000_01]
        var inner = Inner(a: [1, nil, 3], b: "x")
        var empty: [String] = []
        var map = ["z": 1, "a": 2]
        var flag = true
        var nothing: Int? = nil
        var nested = [[Inner(a: [], b: "")]]

        enum CodingKeys: String, CodingKey { case s, n, inner, empty, map, flag, nothing, nested, deep }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(s, forKey: .s)
            try c.encode(n, forKey: .n)
            try c.encode(inner, forKey: .inner)
            try c.encode(empty, forKey: .empty)
            try c.encode(map, forKey: .map)
            try c.encode(flag, forKey: .flag)
            try c.encodeNil(forKey: .nothing)
            try c.encode(nested, forKey: .nested)
            var deep = c.nestedContainer(keyedBy: CodingKeys.self, forKey: .deep)
            try deep.encode(1, forKey: .s)
            var list = deep.nestedUnkeyedContainer(forKey: .n)
            try list.encode("x")
            try list.encodeNil()
        }
    }

    @Test func writesWhatFoundationReads() throws {
        let text = try DashboardJSONEncoder.encode(Outer())
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        #expect(parsed["s"] as? String == Outer().s)
        #expect(parsed["n"] as? [Double] == [1.5, -2, 1e20, 0.000_01])
        #expect((parsed["inner"] as? [String: Any])?["b"] as? String == "x")
        #expect(((parsed["inner"] as? [String: Any])?["a"] as? [Any])?[1] is NSNull)
        #expect(parsed["empty"] as? [String] == [])
        #expect(parsed["map"] as? [String: Int] == ["a": 2, "z": 1])
        #expect(text.contains(#""map":{"a":2,"z":1}"#), "dictionaries sorted")
        #expect(parsed["flag"] as? Bool == true)
        #expect(parsed["nothing"] is NSNull)
        #expect(((parsed["nested"] as? [[[String: Any]]])?.first?.first)?["b"] as? String == "")
        let deep = try #require(parsed["deep"] as? [String: Any])
        #expect(deep["s"] as? Int == 1)
        #expect((deep["n"] as? [Any])?.count == 2)
        #expect(text.hasPrefix(#"{"s":"quote \"#), "keys in the order encoded")
        #expect(throws: DashboardJSONEncoder.Failure.nonFinite) { try DashboardJSONEncoder.encode([Double.nan]) }
    }
}
