import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing
@testable import MotionPhones

/// The phone's own pressure, gravity and attitude, decoded at the boundary into Core Motion's units and frames.
@Suite struct PhoneExtrasTests {
    func close(_ a: Vector3, _ b: Vector3, _ tolerance: Double = 1e-9) -> Bool {
        abs(a.x - b.x) < tolerance && abs(a.y - b.y) < tolerance && abs(a.z - b.z) < tolerance
    }

    @Test func androidEastNorthUpBecomesNorthWestUp() throws {
        // Face up, the top of the screen (device y) toward north: Android's quaternion is the identity.
        let q = try #require(PhoneFrames.coreMotionAttitude(fromAndroid: .identity))
        #expect(close(q.rotate(Vector3(0, 1, 0)), Vector3(1, 0, 0)), "device y points north: reference x")
        #expect(close(q.rotate(Vector3(1, 0, 0)), Vector3(0, -1, 0)), "device x points east: minus west")
        #expect(close(q.rotate(Vector3(0, 0, 1)), Vector3(0, 0, 1)))
        // Turned 30° counter-clockwise about up: device y points 30° west of north, in both frames.
        let a = 30.0 * .pi / 180
        let turned = try #require(PhoneFrames.coreMotionAttitude(fromAndroid: Quaternion(w: cos(a / 2), x: 0, y: 0, z: sin(a / 2))))
        #expect(close(turned.rotate(Vector3(0, 1, 0)), Vector3(cos(a), sin(a), 0)))
        #expect(PhoneFrames.coreMotionAttitude(fromAndroid: Quaternion(w: 0, x: 0, y: 0, z: 0)) == nil)
        #expect(PhoneFrames.coreMotionAttitude(fromApple: Quaternion(w: .nan, x: 0, y: 0, z: 0)) == nil)
        // A rotation vector without w: w derived.
        let rv = try #require(PhoneFrames.androidQuaternion(rotationVector: [0, 0, sin(a / 2)]))
        #expect(abs(rv.w - cos(a / 2)) < 1e-12)
    }

    @Test func sensorServerExtras() throws {
        let rv = SensorServerDecoder.decode(Array(#"{"type":"android.sensor.rotation_vector","values":[0,0,0,1,0.05],"timestamp":2000000000}"#.utf8))
        guard case .attitude(let q) = try #require(rv.extras.first?.quantity) else { Issue.record("no attitude"); return }
        #expect(close(q.rotate(Vector3(0, 1, 0)), Vector3(1, 0, 0)))
        #expect(rv.extras.first?.phoneTime == 2)
        let g = SensorServerDecoder.decode(Array(#"{"type":"android.sensor.gravity","values":[0,0,9.80665],"timestamp":5}"#.utf8))
        #expect(g.extras.first?.quantity == .gravity(Vector3(0, 0, -1)))
        let p = SensorServerDecoder.decode(Array(#"{"type":"android.sensor.pressure","values":[1013.25],"timestamp":5}"#.utf8))
        #expect(p.extras.first?.quantity == .pressure(101.325))
        #expect(SensorServerDecoder.decode(Array(#"{"type":"android.sensor.pressure","values":[null],"timestamp":5}"#.utf8)).extras.isEmpty)
    }

    @Test(arguments: SensorLoggerConvention.allCases) func sensorLoggerExtras(convention: SensorLoggerConvention) throws {
        // Face up, top of the screen north. Standardised (Android): ENU identity, gravity +9.80665 on z.
        // Apple: the CMAttitude quaternion itself (identity: device x north), gravity −9.80665 on z.
        let gz = convention == .apple ? -9.80665 : 9.80665
        let body = """
        {"messageId":0,"sessionId":"s","deviceId":"d","payload":[
         {"name":"barometer","time":1700000000000000000,"values":{"pressure":994.28662109375,"relativeAltitude":0}},
         {"name":"gravity","time":1700000000010000000,"values":{"x":0,"y":0,"z":\(gz)}},
         {"name":"orientation","time":1700000000010000000,"values":{"qw":1,"qx":0,"qy":0,"qz":0,"roll":0,"pitch":0,"yaw":0}}]}
        """
        var decoder = SensorLoggerDecoder(convention: convention)
        let (d, _) = decoder.decode(body: Array(body.utf8))
        #expect(d.extras.count == 3)
        #expect(d.extras[0].quantity == .pressure(99.428662109375))
        #expect(d.extras[0].phoneTime == 1_700_000_000)
        #expect(d.extras[1].quantity == .gravity(Vector3(0, 0, -1)))
        guard case .attitude(let q) = d.extras[2].quantity else { Issue.record("no attitude"); return }
        let top = q.rotate(Vector3(0, 1, 0))
        #expect(convention == .apple ? close(top, Vector3(0, 1, 0)) : close(top, Vector3(1, 0, 0)), "\(top)")
    }

    @Test func sensorLogExtras() throws {
        let json = #"{"motionTimestamp_sinceReboot":"100.5","motionQuaternionX":"0.000000","motionQuaternionY":"0.000000","motionQuaternionZ":"0.707107","motionQuaternionW":"-0.707107","motionGravityX":"0.000000","motionGravityY":"0.000000","motionGravityZ":"-0.999800","altimeterTimestamp_sinceReboot":"100.2","altimeterPressure":"101.234567"}"#
        var decoder = SensorLogDecoder()
        let d = decoder.decode(json: Array(json.utf8))
        #expect(d.rejected.isEmpty)
        #expect(d.extras.count == 3)
        #expect(d.extras.contains(PhoneExtraReading(phoneTime: 100.2, quantity: .pressure(101.234567))))
        #expect(d.extras.contains(PhoneExtraReading(phoneTime: 100.5, quantity: .gravity(Vector3(0, 0, -0.9998)))))
        // w may be negative: the quaternion is used as sent (normalised), −90° about z either way.
        let q = try #require(d.extras.compactMap { if case .attitude(let q) = $0.quantity { q } else { nil } }.first)
        #expect(close(q.rotate(Vector3(1, 0, 0)), Vector3(0, -1, 0), 1e-5))
    }

    @Test func phyphoxConfigWithExtras() {
        let config = #"""
        {"buffers":[{"name":"p","size":0},{"name":"pt","size":0},{"name":"ax","size":0},{"name":"ay","size":0},{"name":"az","size":0},{"name":"aw","size":0},{"name":"at","size":0}],
         "inputs":[{"source":"pressure","outputs":[{"x":"p"},{"t":"pt"}]},
                   {"source":"attitude","outputs":[{"x":"ax"},{"y":"ay"},{"z":"az"},{"abs":"aw"},{"t":"at"}]},
                   {"source":"attitude","outputs":[{"x":"ax"},{"t":"at"}]}]}
        """#
        let channels = PhyphoxChannel.channels(config: Array(config.utf8)) ?? []
        #expect(channels.map(\.source) == ["pressure", "attitude"])
        var poller = PhyphoxPoller(channels: channels, platform: .iOS)
        #expect(poller.path == "/get?pt&p&at&ax&ay&az&aw")
        let answer = #"""
        {"buffer":{"pt":{"buffer":[1.0]},"p":{"buffer":[1013.25]},"at":{"buffer":[1.0]},"ax":{"buffer":[0]},"ay":{"buffer":[0]},"az":{"buffer":[0]},"aw":{"buffer":[1]}},"status":{"session":"a","measuring":true}}
        """#
        let d = poller.decode(Array(answer.utf8))
        #expect(d.extras.count == 2)
        #expect(d.extras.first?.quantity == .pressure(101.325))
        #expect(poller.path == "/get?pt=1.0&p=1.0%7Cpt&at=1.0&ax=1.0%7Cat&ay=1.0%7Cat&az=1.0%7Cat&aw=1.0%7Cat")
    }
}
