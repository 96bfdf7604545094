import Foundation
import MotionFusion
import Testing
@testable import MotionDashboard

@Suite struct HubTests {
    @Test func aNewPageGetsHelloThenState() async throws {
        let feed = ScriptedFeed(streams: [.accelerometer, .gyro, .deviceMotion])
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let drain = Drain(page)
        let msgs = await drain.next(2)
        let hello = msgs[0], state = msgs[1]
        #expect(hello["type"] as? String == "hello")
        #expect(hello["protocol"] as? Int == 1)
        let source = try #require(hello["source"] as? [String: Any])
        #expect(source["identifier"] as? String == "test:scripted")
        #expect(source["name"] as? String == "Scripted \"test\" feed")
        let streams = try #require(source["streams"] as? [String: Any])
        #expect(Set(streams.keys) == ["accelerometer", "gyro", "deviceMotion"])
        let accel = try #require(streams["accelerometer"] as? [String: Any])
        #expect(accel["maximumRateHz"] as? Double == 100)
        #expect(accel["range"] as? Double == 8)
        #expect((source["details"] as? [[String]]) == [["kind", "unit test"]])
        #expect(hello["referenceFrames"] as? [String] == ["xArbitraryZVertical", "xMagneticNorthZVertical"])
        let columns = try #require(hello["columns"] as? [String: [String]])
        #expect(columns["gyro"] == ["t", "x", "y", "z"])
        #expect(columns["deviceMotion"]?.count == 22)
        let limits = try #require(hello["limits"] as? [String: [String: Double]])
        #expect(limits["intervalMs"] == ["min": 10, "max": 100, "step": 5])
        #expect(limits["filterFactor"]?["default"] == 0.1)

        #expect(state["type"] as? String == "state")
        #expect(state["intervalMs"] as? Int == 20)
        #expect(state["clients"] as? Int == 1)
        let sensors = try #require(state["sensors"] as? [String: [String: Any]])
        #expect(sensors["magnetometer"]?["available"] as? Bool == false)
        #expect(sensors["magnetometer"]?["running"] as? Bool == false)
        #expect(sensors["gyro"]?["running"] as? Bool == true)
        #expect(state["referenceFrame"] as? String == "xMagneticNorthZVertical")
        #expect((state["filter"] as? [String: Any])?["mode"] as? String == "off")
        #expect(state["orientation"] is NSNull)
    }

    @Test func theFeedRunsOnlyWhilePagesAreConnected() {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        #expect(feed.applied.isEmpty)
        let a = hub.connect()
        #expect(feed.last?.running == DashboardSensor.motion)
        #expect(feed.last?.interval == 0.020)
        let b = hub.connect()
        #expect(feed.applied.count == 1, "a second page changes nothing the feed must know")
        hub.disconnect(a)
        #expect(feed.last?.running.isEmpty == false)
        hub.disconnect(b)
        #expect(feed.last?.running.isEmpty == true)
    }

    @Test func controlsChangeTheFeedAndAreBroadcast() async {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let a = hub.connect(), b = hub.connect()
        let da = Drain(a), db = Drain(b)
        _ = await da.next(3)  // hello, state, state (b joined)
        _ = await db.next(2)
        hub.receive(#"{"type":"interval","ms":55,"id":1}"#, from: a)
        #expect(feed.last?.interval == 0.055)
        let replyA = await da.next(2)
        #expect(replyA[0]["type"] as? String == "state")
        #expect(replyA[0]["intervalMs"] as? Int == 55)
        #expect(replyA[1]["type"] as? String == "ack")
        #expect(replyA[1]["request"] as? String == "interval")
        #expect(replyA[1]["id"] as? Int == 1)
        let seenByB = await db.next()
        #expect(seenByB[0]["intervalMs"] as? Int == 55, "the other page follows the slider")

        hub.receive(#"{"type":"stop","sensor":"gyro"}"#, from: b)
        #expect(feed.last?.running == [.accelerometer, .magnetometer, .deviceMotion])
        #expect(feed.last?.referenceFrame == "xMagneticNorthZVertical", "magnetic north by default when offered")
        hub.receive(#"{"type":"referenceFrame","frame":"xArbitraryZVertical"}"#, from: b)
        #expect(feed.last?.referenceFrame == "xArbitraryZVertical")
        hub.receive(#"{"type":"start","sensor":"gyro"}"#, from: b)
        #expect(feed.last?.running == DashboardSensor.motion)
    }

    @Test func refusedControlsGetAnErrorReplyAndChangeNothing() async {
        let feed = ScriptedFeed(streams: [.accelerometer], frames: [])
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        let before = feed.applied
        let cases: [(String, String)] = [
            (#"{"type":"interval","ms":7,"id":"x"}"#, "outOfRange"),
            (#"{"type":"interval","ms":101}"#, "outOfRange"),
            (#"{"type":"start","sensor":"gyro"}"#, "unavailable"),
            (#"{"type":"start","sensor":"thermometer"}"#, "unknownName"),
            (#"{"type":"referenceFrame","frame":"xTrueNorthZVertical"}"#, "unavailable"),
            (#"{"type":"filter","mode":"lowPass","factor":2}"#, "outOfRange"),
            (#"not json"#, "malformed"),
            (#"{"type":"selfDestruct"}"#, "unknownType"),
        ]
        for (text, code) in cases {
            hub.receive(text, from: page)
            let reply = await d.next()
            #expect(reply.first?["type"] as? String == "error", "\(text)")
            #expect(reply.first?["code"] as? String == code, "\(text)")
            #expect((reply.first?["message"] as? String)?.isEmpty == false)
        }
        hub.receiveBinary(from: page)
        #expect(await d.next().first?["code"] as? String == "malformed")
        #expect(feed.applied == before)
        #expect(hub.clientCount == 1, "a bad message never drops the page")
        hub.receive(#"{"type":"interval","ms":7,"id":"x"}"#, from: page)
        #expect(await d.next().first?["id"] as? String == "x")
    }

    @Test func samplesAreBatchedOncePerFrame() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        #expect(hub.flush() == 0, "no samples, no message")
        for i in 0..<3 { feed.emit(.accelerometer, t: 10 + Double(i) * 0.01, 0.1, -0.2, -1) }
        feed.emit(.gyro, t: 10.005, 1.5, 0, -0.25)
        feed.emit(.deviceMotion(timestamp: 10.006))
        #expect(hub.flush() == 5)
        #expect(hub.flush() == 0)
        let batch = try #require(await d.next().first)
        #expect(batch["type"] as? String == "samples")
        #expect(batch["seq"] as? Int == 1)
        let accel = try #require(batch["accelerometer"] as? [[Double]])
        #expect(accel == [[10, 0.1, -0.2, -1], [10.01, 0.1, -0.2, -1], [10.02, 0.1, -0.2, -1]])
        #expect(batch["gyro"] as? [[Double]] == [[10.005, 1.5, 0, -0.25]])
        #expect(batch["magnetometer"] == nil)
        let motion = try #require((batch["deviceMotion"] as? [[Any]])?.first)
        #expect(motion.count == 22)
        #expect(motion[0] as? Double == 10.006)
        #expect(motion[1] as? Double == 0.1)     // roll
        #expect(motion[7] as? Double == 1)       // qw
        #expect(motion[10] as? Double == -1)     // gravity z
        #expect(motion[20] as? Int == 2)         // field accuracy
        #expect(motion[21] as? Double == 42.5)   // heading
    }

    @Test func stoppedStreamsAreNotSent() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        hub.receive(#"{"type":"stop","sensor":"magnetometer"}"#, from: page)
        _ = await d.next(2)
        feed.emit(.magnetometer, t: 1, 20, 0, -40)
        feed.emit(.accelerometer, t: 1, 0, 0, -1)
        hub.flush()
        let batch = try #require(await d.next().first)
        #expect(batch["magnetometer"] == nil)
        #expect(batch["accelerometer"] != nil)
    }

    @Test func aSlowPageIsDroppedWithAReasonAndOthersGoOn() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed, outboxCapacity: 8)
        let slow = hub.connect()
        let fast = hub.connect()
        let df = Drain(fast)
        _ = await df.next(2)
        // The slow page never reads: hello + 2 states already wait, so 6 more frames fill it.
        var frames = 0
        while hub.clientCount == 2, frames < 100 {
            feed.emit(.accelerometer, t: Double(frames), 0, 0, -1)
            hub.flush()
            frames += 1
            _ = await df.next()  // the fast page keeps up
        }
        #expect(frames == 6)
        #expect(hub.clientCount == 1)
        let reason = try #require(slow.dropReason)
        #expect(reason.contains("too slow"))
        #expect(reason.contains("8 messages"))
        // What was queued before the drop is still there, then the stream ends.
        let ds = Drain(slow)
        #expect(await ds.next(8).count == 8)
        #expect(await ds.finished())
        // The fast page is unaffected.
        feed.emit(.accelerometer, t: 1000, 0, 0, -1)
        hub.flush()
        #expect(await df.next().first?["type"] as? String == "samples")
    }

    @Test func lowAndHighPassFollowTheSeedCode() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        hub.receive(#"{"type":"filter","mode":"lowPass","factor":0.5}"#, from: page)
        _ = await d.next(2)
        feed.emit(.accelerometer, t: 1, 0, 0, -1)   // first sample seeds the filter
        feed.emit(.accelerometer, t: 2, 1, 0, -1)   // 0.5·1 + 0.5·0
        feed.emit(.accelerometer, t: 3, 1, 0, -1)   // 0.5·1 + 0.5·0.5
        hub.flush()
        let low = try #require(await d.next().first?["accelerometer"] as? [[Double]])
        #expect(low.map { $0[1] } == [0, 0.5, 0.75])
        #expect(low.map { $0[3] } == [-1, -1, -1])

        hub.receive(#"{"type":"filter","mode":"highPass","factor":0.5}"#, from: page)
        _ = await d.next(2)
        feed.emit(.accelerometer, t: 4, 0, 0, -1)
        feed.emit(.accelerometer, t: 5, 1, 0, -1)
        hub.flush()
        let high = try #require(await d.next().first?["accelerometer"] as? [[Double]])
        #expect(high.map { $0[1] } == [0, 0.5], "x − low")
        #expect(high.map { $0[3] } == [0, 0], "gravity removed")
    }

    @Test func sourceErrorsAndOrientationReachEveryPage() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        feed.emit(.error(.gyro, "device removed: /dev/iio:device0"))
        let msgs = await d.next(2)
        #expect(msgs[0]["type"] as? String == "sourceError")
        #expect(msgs[0]["sensor"] as? String == "gyro")
        #expect(msgs[0]["message"] as? String == "device removed: /dev/iio:device0")
        let sensors = try #require(msgs[1]["sensors"] as? [String: [String: Any]])
        #expect(sensors["gyro"]?["error"] as? String == "device removed: /dev/iio:device0")
        feed.emit(.orientation("faceUp"))
        #expect(await d.next().first?["orientation"] as? String == "faceUp")
        feed.emit(.error(nil, "unplugged"))
        let whole = await d.next(2)
        #expect(whole[0]["sensor"] is NSNull)
        #expect(whole[1]["sourceError"] as? String == "unplugged")
    }

    @Test func theTickerFlushesOnTheInjectedClock() async throws {
        let feed = ScriptedFeed()
        let hub = DashboardHub(feed: feed)
        let page = hub.connect()
        let d = Drain(page)
        _ = await d.next(2)
        let clock = StepClock()
        let ticker = Task { await hub.runFrames(clock: clock, frame: .milliseconds(16)) }
        defer { ticker.cancel() }
        await clock.waitForSleeper()
        feed.emit(.gyro, t: 2, 0, 0, 2)
        clock.advance(by: .milliseconds(16))
        // Only the ticker flushes here, and only because the injected clock moved one frame.
        let batch = try #require(await d.next().first)
        #expect(batch["gyro"] as? [[Double]] == [[2, 0, 0, 2]])
        await clock.waitForSleeper()
        feed.emit(.gyro, t: 3, 0, 0, 3)
        clock.advance(by: .milliseconds(16))
        #expect(await d.next().first?["seq"] as? Int == 2)
    }
}

extension DashboardFeedEvent {
    static func deviceMotion(timestamp: Double) -> DashboardFeedEvent {
        .sample(DashboardSample(
            timestamp: timestamp,
            deviceMotion: DashboardDeviceMotion(
                roll: 0.1, pitch: -0.2, yaw: 0.3, quaternion: Quaternion(w: 1, x: 0, y: 0, z: 0),
                gravity: Vector3(0, 0, -1), userAcceleration: Vector3(0.01, 0.02, 0.03),
                rotationRate: Vector3(0, 0, 0.5), magneticField: Vector3(20, 0, -40),
                magneticFieldAccuracy: 2, heading: 42.5)))
    }
}
