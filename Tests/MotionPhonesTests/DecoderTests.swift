import Foundation
import MotionFusion
import MotionSources
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import MotionPhones

@Suite struct PhoneDecoderTests {
    @Test func sensorServerConvertsAndroidUnits() {
        let json = #"{"values":[0.31892395,-0.97802734,10.049896],"timestamp":3925657519043709,"accuracy":2,"type":"android.sensor.accelerometer"}"#
        let d = SensorServerDecoder.decode(Array(json.utf8))
        #expect(d.readings.count == 1)
        let r = d.readings[0]
        #expect(r.sensor == .accelerometer)
        #expect(abs(r.value.z - (-10.049896 / 9.80665)) < 1e-12)
        #expect(abs(r.value.x - (-0.31892395 / 9.80665)) < 1e-12)
        #expect(abs(r.phoneTime! - 3_925_657.519043709) < 1e-6)
        // Without a type, the single-sensor endpoint's type applies.
        let gyro = SensorServerDecoder.decode(Array(#"{"values":[0,0,0.5],"timestamp":5}"#.utf8), defaultType: "android.sensor.gyroscope")
        #expect(gyro.readings.first?.value == Vector3(0, 0, 0.5))
        #expect(SensorServerDecoder.decode(Array("{nope".utf8)).rejected.count == 1)
        #expect(SensorServerDecoder.decode(Array(#"{"type":"android.sensor.gyroscope","values":[1],"timestamp":5}"#.utf8)).rejected.count == 1)
        // Sensors this project does not use are skipped silently.
        #expect(SensorServerDecoder.decode(Array(#"{"type":"android.sensor.light","values":[3],"timestamp":5}"#.utf8)).rejected.isEmpty)
    }

    @Test func hyperIMULines() {
        let d = HyperIMUDecoder(layout: [.accelerometer, nil, .gyro]).decoding(line: "1700000000123,0,0,9.80665,1,2,3,0.1,0.2,0.5,45.1,7.6,100")
        #expect(d.readings.count == 2)
        #expect(d.readings[0].value == Vector3(-0.0, -0.0, -1))
        #expect(d.readings[0].phoneTime == 1_700_000_000.123)
        #expect(d.readings[1].value == Vector3(0.1, 0.2, 0.5))
        // A MAC address first, no timestamp.
        let mac = HyperIMUDecoder(layout: [.gyro]).decoding(line: "AA:BB:CC:DD:EE:FF, 0.1, 0.2, 0.3")
        #expect(mac.readings.first?.phoneTime == nil)
        #expect(mac.readings.first?.value == Vector3(0.1, 0.2, 0.3))
        #expect(HyperIMUDecoder().decoding(line: "timestamp,MPL_Gyroscope.x,MPL_Gyroscope.y").rejected.count == 1)
        #expect(HyperIMUDecoder().decoding(line: "1700000000123,1,2").rejected.count == 1)
        #expect(HyperIMUDecoder().decoding(line: "@ HyperIMU - ianovir - 2017").readings.isEmpty)
        #expect(HyperIMUDecoder.layout(parsing: "acc,skip,mag") == [.accelerometer, nil, .magnetometer])
        #expect(HyperIMUDecoder.layout(parsing: "acc,pressure") == nil)
    }

    @Test func sensorLogJSONAndCSV() {
        let json = #"{"loggingSample":"3","accelerometerTimestamp_sinceReboot":"142714.045678","accelerometerAccelerationX":"0.010000","accelerometerAccelerationY":"-0.020000","accelerometerAccelerationZ":"-0.999000","motionTimestamp_sinceReboot":"142714.05","motionRotationRateX":"0","motionRotationRateY":"0","motionRotationRateZ":"0.5","magnetometerX":"null"}"#
        var decoder = SensorLogDecoder()
        let d = decoder.decode(json: Array(json.utf8))
        #expect(d.readings.count == 2)
        #expect(d.readings[0].sensor == .accelerometer && d.readings[0].value == Vector3(0.01, -0.02, -0.999))
        #expect(d.readings[1].sensor == .gyro && d.readings[1].value.z == 0.5 && d.readings[1].phoneTime == 142_714.05)
        var csv = SensorLogDecoder()
        #expect(csv.decode(csvLine: "loggingTime(txt),gyroTimestamp_sinceReboot(s),gyroRotationX(rad/s),gyroRotationY(rad/s),gyroRotationZ(rad/s)").readings.isEmpty)
        let row = csv.decode(csvLine: "2018-04-08 10:31:37.097,100.5,0.1,0.2,0.5")
        #expect(row.readings == [PhoneReading(sensor: .gyro, phoneTime: 100.5, value: Vector3(0.1, 0.2, 0.5))])
        #expect(csv.decode(csvLine: "x,y").rejected.count == 1)
    }

    @Test func splittersCapAndRecover() {
        var s = JSONObjectSplitter(maximumObjectSize: 64)
        let objects = s.feed(Array(#"{"a":"}{"} {"b":{"c":1}}{"#.utf8))
        #expect(objects.map { String(decoding: $0, as: UTF8.self) } == [#"{"a":"}{"}"#, #"{"b":{"c":1}}"#])
        #expect(s.feed(Array("\"x\":1}".utf8)).count == 1)
        _ = s.feed(Array(("{\"big\":\"" + String(repeating: "z", count: 200) + "\"}").utf8))
        #expect(s.oversized == 1)
        #expect(s.feed(Array(#"{"ok":1}"#.utf8)).count == 1)
        var l = LineSplitter(maximumLineLength: 8, hashEnds: true)
        #expect(l.feed(Array("1,2\r\n3,4#0123456789\nok\n".utf8)) == ["1,2", "3,4", "ok"])
        #expect(l.oversized == 1)
    }

    @Test func specParsing() throws {
        let s = try PhoneSpec(parsing: "sensorlogger://0.0.0.0:8000?token=abc%20d&silence=2")
        #expect(s.app == .sensorLogger && s.host == "0.0.0.0" && s.port == 8000)
        #expect(s.parameters["token"] == "abc d")
        #expect(s.description == "sensorlogger://0.0.0.0:8000")
        #expect(try PhoneSpec(parsing: "hyperimu://[::1]:5555").host == "::1")
        #expect(throws: SourceError.self) { try PhoneSpec(parsing: "sensorserver://phone") }
        #expect(throws: SourceError.self) { try PhoneSpec(parsing: "sensorserver://phone:99999") }
        #expect(throws: SourceError.self) { try PhoneSpec(parsing: "sensorserver://phone:0") }
        #expect(throws: SourceError.self) { try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?sensors=acc,light")) }
        #expect(throws: SourceError.self) { try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?silence=-1")) }
    }
}

@Suite struct SensorLoggerHTTPTwinTests {
    func request(_ channel: EmbeddedChannel, method: HTTPMethod = .POST, uri: String = "/", headers: [(String, String)] = [], body: String) throws {
        var h = HTTPHeaders(headers)
        h.add(name: "Content-Length", value: String(body.utf8.count))
        try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: h)))
        if !body.isEmpty {
            try channel.writeInbound(HTTPServerRequestPart.body(channel.allocator.buffer(string: body)))
        }
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
    }

    func status(_ channel: EmbeddedChannel) throws -> UInt? {
        guard case .head(let head) = try channel.readOutbound(as: HTTPServerResponsePart.self) else { return nil }
        while try channel.readOutbound(as: HTTPServerResponsePart.self) != nil {}
        return head.status.code
    }

    @Test func acceptsPushRejectsBadTokenMalformedAndOversized() throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0?token=s3cret&max-body=2048"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        defer { _ = try? source.apply(.none) { _ in } }
        let server = try #require(source.state.withLockedValue { $0.running?.transport } as? SensorLoggerServer)
        let channel = EmbeddedChannel(handler: SensorLoggerHTTPHandler(server: server), loop: EmbeddedEventLoop())
        let body = #"{"messageId":0,"sessionId":"s","deviceId":"d","payload":[{"name":"gyroscope","time":1700000000000000000,"values":{"x":0,"y":0,"z":0.5}}]}"#
        try request(channel, headers: [("Authorization", "Bearer s3cret")], body: body)
        #expect(try status(channel) == 200)
        #expect(c.of(.gyro).count == 1)
        #expect(c.of(.gyro).first?.value.z == 0.5)
        try request(channel, headers: [("Authorization", "Bearer wrong")], body: body)
        #expect(try status(channel) == 401)
        try request(channel, uri: "/?token=s3cret", body: "{not json")
        #expect(try status(channel) == 400)
        #expect(source.statistics.malformed == 1)
        try request(channel, headers: [("X-Token", "s3cret")], body: String(repeating: " ", count: 4096))
        #expect(try status(channel) == 413)
        #expect(source.statistics.oversized == 1)
        #expect(c.of(.gyro).count == 1)
    }

    @Test func requestMachineAlone() {
        var m = SensorLoggerRequestMachine(maximumBody: 10, token: nil)
        do { let ok = m.head(method: "GET", uri: "/", headers: [], keepAlive: true) == .none; #expect(ok) }
        guard case .respond(200, _, false) = m.end() else { Issue.record("GET answered"); return }
        do { let ok = m.head(method: "POST", uri: "/", headers: [], keepAlive: false) == .none; #expect(ok) }
        do { let ok = m.body(Array("12345".utf8)) == .none; #expect(ok) }
        do { let ok = m.end() == .deliver(Array("12345".utf8)); #expect(ok) }
        do { let ok = m.decoded(ok: true) == .respond(status: 200, text: "", close: true); #expect(ok) }
        do { let ok = m.head(method: "POST", uri: "/", headers: [("Content-Length", "11")], keepAlive: true) == .respond(status: 413, text: "body over 10 bytes", close: true); #expect(ok) }
        var n = SensorLoggerRequestMachine(maximumBody: 10, token: nil)
        _ = n.head(method: "DELETE", uri: "/", headers: [], keepAlive: true)
        guard case .respond(405, _, _) = n.end() else { Issue.record("405"); return }
    }
}

extension HyperIMUDecoder {
    /// One line decoded by a fresh copy (the decoder keeps the last timestamp to drop repeated rows).
    func decoding(line: String) -> PhoneDecoded {
        var copy = self
        return copy.decode(line: line)
    }
}
