import NIOCore
import Testing
@testable import MotionMQTT

@Suite struct MQTTPacketTests {
    static let packets: [MQTTPacket] = [
        .connect(MQTTConnect(clientID: "ocm-pub-a", cleanSession: false, keepAlive: 30, username: "robot", password: Array("pw".utf8),
                             will: MQTTMessage(topic: "w", payload: [1, 2], qos: .atLeastOnce, retain: true))),
        .connect(MQTTConnect(clientID: "", cleanSession: true, keepAlive: 0)),
        .connack(sessionPresent: true, returnCode: .accepted),
        .connack(sessionPresent: false, returnCode: .notAuthorized),
        .publish(MQTTMessage(topic: "fleet/a", payload: Array(repeating: 7, count: 300), qos: .atLeastOnce), packetID: 513, dup: true),
        .publish(MQTTMessage(topic: "é/ü", payload: [], qos: .atMostOnce, retain: true), packetID: nil, dup: false),
        .puback(packetID: 65535), .pubrec(packetID: 1), .pubrel(packetID: 2), .pubcomp(packetID: 3),
        .subscribe(packetID: 9, filters: [("fleet/+", .atLeastOnce), ("#", .atMostOnce)]),
        .suback(packetID: 9, granted: [.atLeastOnce, nil]),
        .unsubscribe(packetID: 10, filters: ["fleet/+"]), .unsuback(packetID: 10),
        .pingreq, .pingresp, .disconnect,
    ]

    @Test func everyPacketRoundTripsThroughTheCodec() throws {
        for p in Self.packets {
            let bytes = try p.encoded()
            #expect(try MQTTPacketDecoder.parseAll(bytes) == [p], "\(p.name)")
        }
    }

    @Test func knownBytesMatchTheStandard() throws {
        #expect(try MQTTPacket.pingreq.encoded() == [0xC0, 0x00])
        #expect(try MQTTPacket.puback(packetID: 0x0102).encoded() == [0x40, 0x02, 0x01, 0x02])
        // CONNECT: "MQTT", level 4, flags user+password (clean session off), keepalive 10, id "c", user "u", password "p".
        let connect = try MQTTPacket.connect(MQTTConnect(clientID: "c", cleanSession: false, keepAlive: 10, username: "u", password: [0x70])).encoded()
        #expect(connect == [0x10, 19, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0xC0, 0, 10, 0, 1, 0x63, 0, 1, 0x75, 0, 1, 0x70])
        // Remaining length 321 = 0xC1 0x02 (§2.2.3).
        let big = try MQTTPacket.publish(MQTTMessage(topic: "t", payload: Array(repeating: 0, count: 318)), packetID: nil, dup: false).encoded()
        #expect(Array(big.prefix(3)) == [0x30, 0xC1, 0x02])
    }

    @Test func packetsSplitAnywhereAreReassembled() throws {
        var all: [UInt8] = []
        for p in Self.packets { all += try p.encoded() }
        for chunk in [1, 2, 3, 7, 64] {
            var d = MQTTPacketDecoder()
            var got: [MQTTPacket] = []
            var i = 0
            while i < all.count {
                d.append(all[i..<min(i + chunk, all.count)])
                while let p = try d.next() { got.append(p) }
                i += chunk
            }
            #expect(got == Self.packets)
        }
    }

    @Test(arguments: [
        ([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], "remaining length longer than four bytes"),
        ([0x00, 0x00], "reserved packet type 0"),
        ([0xF0, 0x00], "reserved packet type 15"),
        ([0x36, 0x03, 0x00, 0x01, 0x61], "QoS 3"),
        ([0x32, 0x03, 0x00, 0x01, 0x61], "too short for its packet identifier"),
        ([0x30, 0x04, 0x00, 0x02, 0xC3, 0x28], "not valid UTF-8"),
        ([0x30, 0x03, 0x00, 0x05, 0x61], "5 bytes announced"),
        ([0x41, 0x02, 0x00, 0x01], "reserved flags"),
        ([0x80, 0x02, 0x00, 0x01], "reserved flags"),
        ([0x20, 0x02, 0x00, 0x09], "unknown return code 9"),
        ([0x40, 0x03, 0x00, 0x01, 0x00], "unexpected bytes"),
        ([0x32, 0x05, 0x00, 0x01, 0x61, 0x00, 0x00], "packet identifier 0"),
        ([0x30, 0x04, 0x00, 0x02, 0x61, 0x00], "U+0000"),
        ([0x30, 0x04, 0x00, 0x02, 0x61, 0x23], "wildcard"),
        ([0x40, 0x02, 0x00], "truncated packet"),
    ] as [([UInt8], String)])
    func malformedBytesThrowAClearError(bytes: [UInt8], message: String) {
        do {
            _ = try MQTTPacketDecoder.parseAll(bytes)
            Issue.record("accepted \(bytes)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func aPacketOverTheSizeLimitIsRefusedBeforeItsBodyArrives() throws {
        var d = MQTTPacketDecoder(maximumPacketSize: 1000)
        d.append([0x30, 0xFF, 0x7F])  // announces 16,383 bytes
        #expect(throws: MQTTProtocolError.self) { try d.next() }
    }

    @Test func randomBytesNeverTrap() {
        var rng = SplitMix(seed: 14)
        var decoded = 0
        for _ in 0..<20_000 {
            let n = Int(rng.next() % 40)
            var bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Bias the first byte towards valid packet types so the bodies get exercised.
            if !bytes.isEmpty, rng.next() % 2 == 0 { bytes[0] = UInt8(truncatingIfNeeded: (rng.next() % 14 + 1) << 4) }
            if bytes.count > 1 { bytes[1] = UInt8(truncatingIfNeeded: max(0, n - 2)) }
            if let p = try? MQTTPacketDecoder.parseAll(bytes) { decoded += p.count }
        }
        #expect(decoded > 0)
    }

    @Test func topicFiltersMatchAsTheStandardSays() {
        #expect(mqttTopic("fleet/a/imu", matches: "fleet/#"))
        #expect(mqttTopic("fleet", matches: "fleet/#"))
        #expect(mqttTopic("fleet/a", matches: "fleet/+"))
        #expect(!mqttTopic("fleet/a/imu", matches: "fleet/+"))
        #expect(mqttTopic("fleet/a/imu", matches: "+/+/imu"))
        #expect(!mqttTopic("$SYS/broker", matches: "#"))
        #expect(mqttTopic("a", matches: "a"))
        #expect(!mqttTopic("a/b", matches: "a"))
    }

    @Test func urlsParseWithCredentialsWildcardsAndOptions() throws {
        let u = try MQTTURL(parsing: "mqtt://ro%40bot:p%3Ass@127.0.0.1:1884/fleet/#?device=phone%201&silence=2")
        #expect(u.username == "ro@bot" && u.password == "p:ss" && u.host == "127.0.0.1" && u.port == 1884)
        #expect(u.topic == "fleet/#" && u.parameter("device") == "phone 1" && u.parameter("silence") == "2")
        #expect(u.description == "mqtt://ro@bot@127.0.0.1:1884/fleet/#")
        #expect(try MQTTURL(parsing: "mqtts://[::1]/t").port == 8883)
        for bad in ["http://x/t", "mqtt://:1883/t", "mqtt://h:0/t", "mqtt://h:99999/t", "mqtt://h:12ab/t", "mqtt://h/%zz"] {
            #expect(throws: MQTTProtocolError.self, "\(bad)") { try MQTTURL(parsing: bad) }
        }
    }
}

/// A small deterministic generator for tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
