import Foundation
import MotionFusion
import MotionSources
import Testing
@testable import MotionPhones

/// The phyphox conversation without a network: the machine's actions for scripted answers.
@Suite struct PhyphoxTwinTests {
    let config = Array(#"""
    {"crc32":"0","title":"Acceleration with g","buffers":[{"name":"accX","size":0},{"name":"accY","size":0},
     {"name":"accZ","size":0},{"name":"acc_time","size":0},{"name":"w","size":0}],
     "inputs":[{"source":"accelerometer","outputs":[{"x":"accX"},{"y":"accY"},{"z":"accZ"},{"t":"acc_time"}]},
               {"source":"light","outputs":[{"x":"w"},{"t":"acc_time"}]}]}
    """#.utf8)

    func get(_ t: [Double?], _ z: [Double?], session: String = "s1") -> [UInt8] {
        func list(_ a: [Double?]) -> String { "[" + a.map { $0.map { "\($0)" } ?? "null" }.joined(separator: ",") + "]" }
        let x = Array(repeating: Double?(0), count: z.count)
        return Array("""
        {"buffer":{"acc_time":{"size":0,"updateMode":"partial","buffer":\(list(t))},
        "accX":{"size":0,"updateMode":"partial","buffer":\(list(x))},"accY":{"size":0,"updateMode":"partial","buffer":\(list(x))},
        "accZ":{"size":0,"updateMode":"partial","buffer":\(list(z))}},"status":{"session":"\(session)","measuring":true}}
        """.utf8)
    }

    @Test func conversationThresholdsAndUnequalBuffers() {
        var m = PhyphoxMachine(interval: 0.05, maximumBackoff: 2)
        #expect(m.start() == .get("/config"))
        #expect(m.received(status: 200, body: config).0 == .get("/meta"))
        #expect(m.received(status: 200, body: Array(#"{"deviceModel":"iPhone14,2","deviceBrand":"Apple"}"#.utf8)).0 == .get("/control?cmd=start"))
        #expect(m.poller?.platform == .iOS)
        #expect(m.poller?.channels == [PhyphoxChannel(source: "accelerometer", time: "acc_time", x: "accX", y: "accY", z: "accZ")])
        // Before any answer: the last value of each buffer, no threshold.
        #expect(m.received(status: 200, body: Array(#"{"result":true}"#.utf8)).0 == .get("/get?acc_time&accX&accY&accZ"))
        var (action, decoded) = m.received(status: 200, body: get([1.0], [9.81]))
        #expect(action == .wait(0.05))
        #expect(decoded?.readings.map(\.phoneTime) == [1.0])
        // iOS: Core Motion's g × −9.81 undone exactly.
        #expect(decoded?.readings.first?.value == Vector3(0, 0, -1))
        #expect(m.timerFired() == .get("/get?acc_time=1.0&accX=1.0%7Cacc_time&accY=1.0%7Cacc_time&accZ=1.0%7Cacc_time"))
        // z lags one entry behind the time buffer: two readings now, the third next time.
        (action, decoded) = m.received(status: 200, body: get([1.01, 1.02, 1.03], [9.81, 9.81]))
        #expect(decoded?.readings.map(\.phoneTime) == [1.01, 1.02])
        #expect(m.timerFired() == .get("/get?acc_time=1.02&accX=1.02%7Cacc_time&accY=1.02%7Cacc_time&accZ=1.02%7Cacc_time"))
        // A null value is skipped and counted apart (not malformed); the time still advances.
        (action, decoded) = m.received(status: 200, body: get([1.03, 1.04], [nil, 9.81]))
        #expect(decoded?.readings.map(\.phoneTime) == [1.04])
        #expect(decoded?.rejected == [] && decoded?.empty == 1)
        #expect(decoded?.clock == "phyphox:s1")
        // Another session (the experiment was reloaded): thresholds restart, on a new clock.
        _ = m.timerFired()
        (action, decoded) = m.received(status: 200, body: get([0.01], [9.81], session: "s2"))
        #expect(decoded?.clock == "phyphox:s2")
        #expect(decoded?.readings.map(\.phoneTime) == [0.01])
    }

    @Test func failuresBackOffAndStartOverFromConfig() {
        var m = PhyphoxMachine(interval: 0.05, maximumBackoff: 1)
        _ = m.start()
        #expect(m.failed() == .wait(0.25))
        #expect(m.timerFired() == .get("/config"))
        #expect(m.failed() == .wait(0.5))
        #expect(m.timerFired() == .get("/config"))
        #expect(m.failed() == .wait(1))
        #expect(m.timerFired() == .get("/config"))
        // A phone that is not phyphox (HTTP 404 for /config) is retried the same way.
        #expect(m.received(status: 404, body: []).0 == .wait(1))
        _ = m.timerFired()
        _ = m.received(status: 200, body: config)
        _ = m.received(status: 404, body: [])  // no /meta: Android
        #expect(m.poller?.platform == .android)
        _ = m.received(status: 200, body: [])
        #expect(!m.wasPolling)
        _ = m.received(status: 200, body: get([2.0], [9.80665]))
        #expect(m.wasPolling)
        // Data resets the backoff.
        _ = m.timerFired()
        #expect(m.failed() == .wait(0.25))
    }

    @Test func malformedAnswersAreCountedNotFatal() {
        var p = PhyphoxPoller(channels: PhyphoxChannel.stock, platform: .android)
        #expect(p.decode(Array("not json".utf8)).rejected.count == 1)
        #expect(p.decode(Array(#"{"buffer":{}}"#.utf8)).rejected.count == 3)
        #expect(PhyphoxChannel.channels(config: Array("[1,2]".utf8)) == nil)
        #expect(PhyphoxChannel.channels(config: Array(#"{"inputs":[]}"#.utf8)) == [])
    }

    /// The first poll of a running experiment: phyphox answers `null` for the values that do not exist
    /// yet, in every buffer. That is normal traffic: counted apart, never malformed, nothing said.
    @Test func nullsOfAFirstPollAreNormalTrafficNotMalformed() throws {
        let logged = LockedLines()
        let source = try PhoneSource(spec: PhoneSpec(parsing: "phyphox://127.0.0.1:9?interval=0.05"), log: { logged.append($0) })
        let accelerometer = [PhyphoxChannel.stock[0]]
        var p = PhyphoxPoller(channels: accelerometer, platform: .android)
        var buffers: [String] = []
        for c in accelerometer { for b in c.buffers { buffers.append("\"\(b)\":{\"size\":0,\"updateMode\":\"partial\",\"buffer\":[null]}") } }
        let first = Array(("{\"buffer\":{" + buffers.joined(separator: ",") + "},\"status\":{\"session\":\"s\",\"measuring\":true}}").utf8)
        let decoded = p.decode(first)
        #expect(decoded.rejected == [], "\(decoded.rejected)")
        #expect(decoded.empty == 1)
        source.received(decoded, arrival: 1)
        // Then a value arrives as usual.
        source.received(p.decode(get([0.5], [9.80665])), arrival: 1.1)
        #expect(source.statistics.malformed == 0)
        #expect(source.statistics.empty == decoded.empty)
        #expect(logged.lines.filter { $0.contains("malformed") } == [])
    }
}

/// Lines collected from several threads.
final class LockedLines: Sendable {
    private let box = Locked<[String]>([])
    func append(_ line: String) { box.withLock { $0.append(line) } }
    var lines: [String] { box.withLock { $0 } }
}
