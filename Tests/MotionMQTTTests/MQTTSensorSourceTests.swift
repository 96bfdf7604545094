import Testing
import MotionRecordingFormats
@testable import MotionMQTT

/// The broker source's checks that need no broker.
@Suite struct MQTTSensorSourceTests {
    func message(_ names: [String]) throws -> SensorLoggerPushMessage {
        let entries = names.map { #"{"name":"\#($0)","time":1763980000123456789,"values":{"x":0,"y":0,"z":9.81}}"# }
        return try SensorLoggerPush.decode(Array(#"{"messageId":1,"sessionId":"s","deviceId":"d","payload":[\#(entries.joined(separator: ","))]}"#.utf8))
    }

    @Test func userAccelerationWithoutGravityIsToldApart() throws {
        #expect(MQTTSensorSource.hasUserAccelerationOnly(try message(["accelerometer", "gyroscope"])))
        #expect(!MQTTSensorSource.hasUserAccelerationOnly(try message(["accelerometer", "gravity"])))
        #expect(!MQTTSensorSource.hasUserAccelerationOnly(try message(["totalacceleration", "accelerometer"])))
        #expect(!MQTTSensorSource.hasUserAccelerationOnly(try message(["accelerometeruncalibrated", "accelerometer"])))
        #expect(!MQTTSensorSource.hasUserAccelerationOnly(try message(["gyroscope"])))
    }

    @Test func theMeasuredRateNeedsMoreThanTenReadings() {
        var r = MQTTSensorSource.RateCount()
        for i in 0..<10 { r.add(100 + Double(i) * 0.02) }
        #expect(r.rate == nil)
        r.add(100.2)
        #expect(abs((r.rate ?? 0) - 50) < 1e-9)
        var same = MQTTSensorSource.RateCount()
        for _ in 0..<20 { same.add(5) }
        #expect(same.rate == nil)  // no time span: no rate rather than infinity
    }
}
