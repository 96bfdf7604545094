import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

@Suite struct SensorLoggerPushTests {
    @Test func timeAbove2to53SurvivesJSONExactly() throws {
        let odd: Int64 = 1_698_501_144_401_773_123  // not representable as a Double
        let m = SensorLoggerPushMessage(messageId: 7, sessionId: "s\"1", deviceId: "d\\1", payload: [
            SensorLoggerPushEntry(name: "totalacceleration", time: odd, values: ["x": 0.1, "y": -2.5e-7, "z": 9.80665]),
        ])
        let json = try SensorLoggerPush.encodeJSON(m)
        #expect(String(decoding: json, as: UTF8.self).contains("\"time\":1698501144401773123"))
        #expect(try SensorLoggerPush.decode(json) == m)
    }

    @Test func theDocumentedAndroidBodyDecodes() throws {
        let body = """
            {"messageId": 36, "sessionId": "c5241337-a594-480d-b2f8-4aa2fd8b6c53",
             "deviceId": "7d1c0bff-f830-4dc9-a431-26873453ebb1",
             "payload": [{"name": "barometer", "values": {"relativeAltitude": 0, "pressure": 994.28662109375},
                          "accuracy": 3, "time": 1658038822740147200},
                         {"name":"annotation","time":"1658038822740147201","values":{"text":"hi"}}]}
            """
        let m = try SensorLoggerPush.decode(Array(body.utf8))
        #expect(m.messageId == 36 && m.payload.count == 2)
        #expect(m.payload[0].time == 1_658_038_822_740_147_200 && m.payload[0].accuracy == 3 && m.payload[0].values["pressure"] == 994.28662109375)
        #expect(m.payload[1].time == 1_658_038_822_740_147_201 && m.payload[1].values.isEmpty)
    }

    @Test(arguments: ["", "{", "[]", "{\"messageId\":1}", "{\"messageId\":\"x\",\"sessionId\":\"s\",\"deviceId\":\"d\",\"payload\":[]}",
                      "{\"messageId\":1,\"sessionId\":\"s\",\"deviceId\":\"d\",\"payload\":[{\"name\":\"gyroscope\",\"time\":1e300,\"values\":{}}]}"])
    func malformedJSONThrowsAClearError(text: String) {
        #expect(throws: RecordingError.self) { try SensorLoggerPush.decode(Array(text.utf8)) }
    }

    @Test func coreMotionFaceUpIsPublishedAsPlus9point81AndReadBackAsMinus1g() throws {
        let offset: Int64 = 1_700_000_000_000_000_000
        let samples = [
            RawSample(sensor: .accelerometer, timestamp: 100.01, value: Vector3(0.01, -0.02, -1)),
            RawSample(sensor: .gyro, timestamp: 100.01, value: Vector3(0.1, 0.2, 0.3)),
            RawSample(sensor: .magnetometer, timestamp: 100.02, value: Vector3(20, -5, -40)),
        ]
        let entries = samples.compactMap { SensorLoggerPushConverter.entry(for: $0, epochOffsetNanoseconds: offset) }
        #expect(entries.map(\.name) == ["totalacceleration", "gyroscopeuncalibrated", "magnetometeruncalibrated"])
        #expect(abs((entries[0].values["z"] ?? 0) - 9.80665) < 1e-12)
        #expect(entries[0].time == offset + 100_010_000_000)
        var converter = SensorLoggerPushConverter(epochOffsetNanoseconds: offset)
        let message = SensorLoggerPushMessage(messageId: 1, sessionId: "s", deviceId: "d", payload: entries)
        for bytes in [try SensorLoggerPush.encodeJSON(message), try SensorLoggerPush.encodeBinary(message)] {
            var c = converter
            let back = c.samples(from: try SensorLoggerPush.decode(bytes))
            #expect(back.count == 3)
            for (a, b) in zip(back, samples) {
                #expect(a.sensor == b.sensor && abs(a.timestamp - b.timestamp) < 1e-6)
                #expect((a.value - b.value).length < 1e-4 * max(1, b.value.length))
            }
        }
        _ = converter.samples(from: message)
        #expect(converter.samples(from: message).isEmpty && converter.discardedLate == 3)  // the same times again
    }

    @Test func aRealAndroidPhoneWithUserAccelerationAndGravityReadsMinus1gFaceUp() {
        // Android, lying face up: gravity +9.81 on z, user acceleration ~0, in separate entries of equal time.
        let t: Int64 = 1_700_000_000_123_456_789
        let m = SensorLoggerPushMessage(messageId: 1, sessionId: "s", deviceId: "pixel", payload: [
            SensorLoggerPushEntry(name: "accelerometer", time: t, values: ["x": 0.05, "y": 0, "z": -0.1]),
            SensorLoggerPushEntry(name: "gravity", time: t, values: ["x": 0, "y": 0, "z": 9.80665]),
            SensorLoggerPushEntry(name: "gyroscope", time: t, values: ["x": 0.01, "y": 0, "z": 0]),
            SensorLoggerPushEntry(name: "gravity", time: t + 10_000_000, values: ["x": 0, "y": 0, "z": 9.80665]),
            SensorLoggerPushEntry(name: "orientation", time: t, values: ["qw": 1, "qx": 0, "qy": 0, "qz": 0]),
        ])
        var c = SensorLoggerPushConverter(epochOffsetNanoseconds: t - 50_000_000_000)
        let s = c.samples(from: m)
        let acc = s.filter { $0.sensor == .accelerometer }
        #expect(acc.count == 1)  // the second gravity waits for its partner
        #expect(abs(acc[0].value.z - (-(9.80665 - 0.1) / 9.80665)) < 1e-12 && abs(acc[0].timestamp - 50) < 1e-9)
        #expect(s.filter { $0.sensor == .gyro }.count == 1)
        // Its partner arrives in the next message.
        let next = SensorLoggerPushMessage(messageId: 2, sessionId: "s", deviceId: "pixel", payload: [
            SensorLoggerPushEntry(name: "accelerometer", time: t + 10_000_000, values: ["x": 0, "y": 0, "z": 0]),
        ])
        #expect(c.samples(from: next).map(\.value.z) == [-1])
    }

    @Test func uncalibratedAndTotalAccelerationWinOverUserAccelerationAndAppleConventionIsHonoured() {
        let t: Int64 = 1_700_000_000_000_000_000
        let m = SensorLoggerPushMessage(messageId: 1, sessionId: "s", deviceId: "iphone", payload: [
            SensorLoggerPushEntry(name: "accelerometer", time: t, values: ["x": 0, "y": 0, "z": 0]),
            SensorLoggerPushEntry(name: "gravity", time: t, values: ["x": 0, "y": 0, "z": -9.80665]),
            SensorLoggerPushEntry(name: "accelerometeruncalibrated", time: t, values: ["x": 0, "y": 0, "z": -1.02]),
        ])
        var c = SensorLoggerPushConverter(convention: .apple, epochOffsetNanoseconds: 0)
        #expect(c.samples(from: m).map(\.value.z) == [-1.02])  // g, Apple sign, taken as is
        var android = SensorLoggerPushConverter(epochOffsetNanoseconds: 0)
        let total = SensorLoggerPushMessage(messageId: 1, sessionId: "s", deviceId: "a", payload: [
            SensorLoggerPushEntry(name: "accelerometeruncalibrated", time: t, values: ["x": 0, "y": 0, "z": 9.9]),
            SensorLoggerPushEntry(name: "totalacceleration", time: t + 1, values: ["x": 0, "y": 0, "z": 9.80665]),
        ])
        #expect(android.samples(from: total).map(\.value.z) == [-1])
    }

    @Test func messagesAreReorderedDeduplicatedAndGapsGivenUp() {
        func msg(_ id: Int64, _ session: String = "s") -> SensorLoggerPushMessage {
            SensorLoggerPushMessage(messageId: id, sessionId: session, deviceId: "d", payload: [])
        }
        var r = SensorLoggerPushReorderBuffer(window: 3)
        #expect(r.add(msg(1)).map(\.messageId) == [1])
        #expect(r.add(msg(3)).isEmpty)
        #expect(r.add(msg(2)).map(\.messageId) == [2, 3])
        #expect(r.add(msg(2)).isEmpty && r.duplicates == 1)
        // 4 never comes: after more than 3 held, delivery goes on.
        #expect(r.add(msg(5)).isEmpty && r.add(msg(6)).isEmpty && r.add(msg(7)).isEmpty)
        #expect(r.add(msg(8)).map(\.messageId) == [5, 6, 7, 8] && r.gaps == 1)
        #expect(r.add(msg(4)).isEmpty && r.late == 1)
        // A new session starts afresh.
        #expect(r.add(msg(1, "t")).map(\.messageId) == [1])
    }

    /// The app's streaming stopped and started again in the same session: its `messageId` begins again
    /// at 0 with newer readings. Those are new messages, not duplicates; a real duplicate (old readings)
    /// still is one.
    @Test func aSenderCountingAgainWithNewerReadingsIsNotADuplicate() {
        func msg(_ id: Int64, at time: Int64) -> SensorLoggerPushMessage {
            SensorLoggerPushMessage(messageId: id, sessionId: "s", deviceId: "d", payload: [
                SensorLoggerPushEntry(name: "gyroscope", time: time, values: ["x": 0, "y": 0, "z": 0]),
            ])
        }
        var r = SensorLoggerPushReorderBuffer(window: 1)
        let first = (0..<11).flatMap { r.add(msg(Int64($0), at: 1_000 + Int64($0))) }
        #expect(first.count == 11)
        #expect(r.add(msg(10, at: 1_010)).isEmpty && r.duplicates == 1)
        // Counting begins again, the readings newer than any released.
        let second = (0..<20).flatMap { r.add(msg(Int64($0), at: 2_000 + Int64($0))) }
        #expect(second.map(\.messageId) == Array(0..<20))
        #expect(r.restarts == 1 && r.duplicates == 1)
        // A message of the first run seen again is still a duplicate.
        #expect(r.add(msg(3, at: 1_003)).isEmpty && r.duplicates == 2)
    }

    @Test func binaryPayloadIsSmallAndRandomBytesNeverTrap() throws {
        let payload = (0..<30).map { i in
            SensorLoggerPushEntry(name: "totalacceleration", time: 1_700_000_000_000_000_000 + Int64(i) * 10_000_000, values: ["x": 0, "y": 0.5, "z": 9.8])
        }
        let m = SensorLoggerPushMessage(messageId: 1, sessionId: "0123", deviceId: "dev", payload: payload)
        let bin = try SensorLoggerPush.encodeBinary(m)
        #expect(bin.count == 4 + 8 + 5 + 4 + 8 + 4 + 30 * 17)
        #expect(try SensorLoggerPush.decode(bin).payload.map(\.time) == payload.map(\.time))
        for cut in [0, 5, 20, bin.count - 1] {
            #expect(throws: RecordingError.self) { try SensorLoggerPush.decode(Array(bin.prefix(cut)) + (cut < 4 ? [] : [])) }
        }
        var rng = SplitMix(seed: 3)
        for _ in 0..<5_000 {
            var bytes = bin
            for _ in 0..<3 { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            _ = try? SensorLoggerPush.decode(Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1)))))
        }
    }

    @Test func nonFiniteValuesAreNotPublished() {
        #expect(SensorLoggerPushConverter.entry(for: RawSample(sensor: .gyro, timestamp: 1, value: Vector3(.nan, 0, 0)), epochOffsetNanoseconds: 0) == nil)
        #expect(SensorLoggerPushConverter.entry(for: RawSample(sensor: .gyro, timestamp: .infinity, value: Vector3(0, 0, 0)), epochOffsetNanoseconds: 0) == nil)
        let m = SensorLoggerPushMessage(messageId: 1, sessionId: "s", deviceId: "d", payload: [SensorLoggerPushEntry(name: "gyroscope", time: 0, values: ["x": .nan])])
        #expect(throws: RecordingError.self) { try SensorLoggerPush.encodeJSON(m) }
    }
}
