import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing
@testable import MotionPhones

/// Every phone app with both an export and a live path, on every platform it runs on: the same
/// readings written as the app's export (read by `MotionRecordingFormats`) and sent as its live messages
/// (decoded by `MotionPhones`) give identical samples, and a phone lying face up reads (0, 0, −1) g
/// on every path. The fixtures are written here from `docs/phone-formats.md`.
@Suite struct ExportAndLiveAgreeTests {
    /// What the phone measured, in Core Motion's units and signs: lying face up and still, then tilted
    /// and turning, at 100 Hz; one row per instant.
    struct Truth {
        var acceleration: Vector3  // g, Apple's sign
        var rotation: Vector3  // rad/s
        var field: Vector3  // µT
    }

    static let truth: [Truth] = [
        Truth(acceleration: Vector3(0, 0, -1), rotation: Vector3(0, 0, 0), field: Vector3(20, -5, -40)),
        Truth(acceleration: Vector3(0, 0, -1), rotation: Vector3(0.01, -0.02, 0.03), field: Vector3(20.5, -5, -40)),
        Truth(acceleration: Vector3(0.1, -0.2, -0.97), rotation: Vector3(0.4, 0.5, -0.6), field: Vector3(21, -4.5, -39.5)),
        Truth(acceleration: Vector3(0.015625, 0.25, -1.03125), rotation: Vector3(-0.125, 0.25, 0.5), field: Vector3(19.75, -6, -41)),
    ]

    /// Android's numbers for an acceleration: m/s², opposite sign (the app's own factor).
    static func android(_ a: Vector3, gravity: Double = PhoneUnits.standardGravity) -> Vector3 { a * -gravity }

    /// A number as the apps print it (shortest round-trip text).
    static func text(_ v: Double) -> String { "\(v)" }

    /// Samples sorted per sensor, then time (the paths interleave sensors differently).
    static func ordered(_ s: [RawSample]) -> [RawSample] {
        s.sorted { a, b in
            a.sensor.rawValue != b.sensor.rawValue ? a.sensor.rawValue < b.sensor.rawValue : a.timestamp < b.timestamp
        }
    }

    static func fromExport(_ entries: [String: String]) throws -> [RawSample] {
        var input = try RecordingInput.open(entries: entries.mapValues { Array($0.utf8) }, name: "export")
        return ordered(try input.readAllInFileOrder().map(\.sample))
    }

    static func fromLive(_ decoded: [PhoneDecoded]) -> [RawSample] {
        for d in decoded { #expect(d.rejected == []) }
        return ordered(decoded.flatMap(\.readings).map { RawSample(sensor: $0.sensor, timestamp: $0.phoneTime ?? .nan, value: $0.value) })
    }

    /// Both paths gave the same samples, each sensor one per instant, and the first (face up) reads (0, 0, −1) g.
    static func expectAgreement(_ export: [RawSample], _ live: [RawSample], _ what: String, sensors: Set<SensorKind> = Set(SensorKind.motion)) {
        #expect(export == live, "\(what): export \(export) ≠ live \(live)")
        for sensor in sensors {
            #expect(export.filter { $0.sensor == sensor }.count == truth.count, "\(what): \(sensor)")
        }
        let faceUp = export.filter { $0.sensor == .accelerometer }.prefix(2)
        #expect(faceUp.count == 2, "\(what)")
        for s in faceUp {
            #expect(abs(s.value.x) < 1e-12 && abs(s.value.y) < 1e-12 && abs(s.value.z + 1) < 1e-12, "\(what): face up reads \(s.value)")
        }
        let tilted = export.filter { $0.sensor == .accelerometer }.dropFirst(2)
        for (s, t) in zip(tilted, truth.dropFirst(2)) {
            #expect((s.value - t.acceleration).length < 1e-9, "\(what): \(s.value) for \(t.acceleration)")
        }
    }

    // MARK: Sensor Logger (iOS, iOS standardised, Android): export folder, HTTP push, MQTT

    enum SensorLoggerKind: String, CaseIterable, Sendable {
        case iOS = "ios", iOSStandardised = "ios-standardised", android = "android"
    }

    @Test(arguments: SensorLoggerKind.allCases) func sensorLogger(kind: SensorLoggerKind) throws {
        let t0: Int64 = 1_763_980_000_123_456_700
        func time(_ i: Int) -> Int64 { t0 + Int64(i) * 10_000_000 }
        // iOS without standardisation: raw acceleration in g, Apple's sign; otherwise m/s², Android's.
        func raw(_ a: Vector3) -> Vector3 { kind == .iOS ? a : Self.android(a) }
        let metadata = "version,device name,recording time,platform,appVersion,standardisation\n"
            + "3,phone,2026-11-24_10-26-40,\(kind == .android ? "android" : "ios"),1.40.0,\(kind == .iOSStandardised ? "true" : "false")\n"
        func csv(_ values: (Truth) -> Vector3) -> String {
            var s = "time,seconds_elapsed,z,y,x\n"
            for (i, t) in Self.truth.enumerated() {
                let v = values(t)
                s += "\(time(i)),\(Double(i) / 100),\(Self.text(v.z)),\(Self.text(v.y)),\(Self.text(v.x))\n"
            }
            return s
        }
        let export = try Self.fromExport([
            "Metadata.csv": metadata,
            "AccelerometerUncalibrated.csv": csv { raw($0.acceleration) },
            "GyroscopeUncalibrated.csv": csv(\.rotation),
            "MagnetometerUncalibrated.csv": csv(\.field),
        ])
        // Live: one push message per instant, the phone not telling its platform.
        var messages: [[UInt8]] = []
        for (i, t) in Self.truth.enumerated() {
            func entry(_ name: String, _ v: Vector3) -> String {
                #"{"name":"\#(name)","time":\#(time(i)),"values":{"x":\#(Self.text(v.x)),"y":\#(Self.text(v.y)),"z":\#(Self.text(v.z))}}"#
            }
            let payload = [entry("accelerometeruncalibrated", raw(t.acceleration)), entry("gyroscopeuncalibrated", t.rotation),
                           entry("magnetometeruncalibrated", t.field)]
            messages.append(Array(#"{"messageId":\#(i + 1),"sessionId":"s","deviceId":"phone","payload":[\#(payload.joined(separator: ","))]}"#.utf8))
        }
        var http = SensorLoggerDecoder()
        let live = Self.fromLive(messages.map { http.decode(body: $0).0 })
        Self.expectAgreement(export, live, "Sensor Logger \(kind.rawValue), HTTP push")
        #expect(http.convention == (kind == .iOS ? .apple : .standardised))
        // MQTT: the broker source's converter, with the same clock (epoch).
        var mqtt = SensorLoggerPushConverter(epochOffsetNanoseconds: 0)
        let viaMQTT = Self.ordered(try messages.flatMap { mqtt.samples(from: try SensorLoggerPush.decode($0)) })
        Self.expectAgreement(export, viaMQTT, "Sensor Logger \(kind.rawValue), MQTT")
    }

    // MARK: SensorLog (iOS): CSV file, TCP stream of CSV lines, TCP stream of JSON objects

    @Test func sensorLog() throws {
        let header = ["loggingTime(txt)", "accelerometerTimestamp_sinceReboot(s)", "accelerometerAccelerationX(G)", "accelerometerAccelerationY(G)",
                      "accelerometerAccelerationZ(G)", "gyroTimestamp_sinceReboot(s)", "gyroRotationX(rad/s)", "gyroRotationY(rad/s)", "gyroRotationZ(rad/s)",
                      "magnetometerTimestamp_sinceReboot(s)", "magnetometerX(µT)", "magnetometerY(µT)", "magnetometerZ(µT)"]
        var rows: [[String]] = []
        for (i, t) in Self.truth.enumerated() {
            let ts = Self.text(142_714.045678 + Double(i) / 100)
            let row = ["2023-06-05T23:37:35.\(646 + 10 * i)+09:00", ts, Self.text(t.acceleration.x), Self.text(t.acceleration.y), Self.text(t.acceleration.z),
                       ts, Self.text(t.rotation.x), Self.text(t.rotation.y), Self.text(t.rotation.z),
                       ts, Self.text(t.field.x), Self.text(t.field.y), Self.text(t.field.z)]
            rows.append(row)
            if i == 1 { rows.append(row) }  // a logging tick that only repeats held values
        }
        let lines = ([header] + rows).map { $0.joined(separator: ",") }
        let export = try Self.fromExport(["2023-06-05_23_37_35_my_iOS_device.csv": lines.joined(separator: "\n") + "\n"])
        var csv = SensorLogDecoder()
        Self.expectAgreement(export, Self.fromLive(lines.map { csv.decode(csvLine: $0) }), "SensorLog CSV stream")
        var json = SensorLogDecoder()
        let names = header.map { SensorLogDecoder.fieldName(Substring($0)) }
        let objects = rows.map { row in
            "{" + zip(names, row).map { #""\#($0)":"\#($1)""# }.joined(separator: ",") + "}"
        }
        Self.expectAgreement(export, Self.fromLive(objects.map { json.decode(json: Array($0.utf8)) }), "SensorLog JSON stream")
    }

    // MARK: HyperIMU (Android): file, UDP lines

    @Test func hyperIMU() throws {
        var rows: [String] = []
        for (i, t) in Self.truth.enumerated() {
            let a = Self.android(t.acceleration)
            let row = ([Double(1_704_103_200_000 + 10 * i), a.x, a.y, a.z, t.rotation.x, t.rotation.y, t.rotation.z, t.field.x, t.field.y, t.field.z])
                .enumerated().map { $0.offset == 0 ? String(Int($0.element)) : Self.text($0.element) }.joined(separator: ",")
            rows.append(row)
            if i == 2 { rows.append(row) }  // the app repeats a row at its sampling time
        }
        let file = "@ HyperIMU - ianovir - 2017\r\n@ Date: Mon Jan 01 10:00:00 GMT 2024 Sampling Time: 10ms\r\n\r\n"
            + "timestamp,BMI160_Accelerometer.x,BMI160_Accelerometer.y,BMI160_Accelerometer.z,BMI160_Gyroscope.x,BMI160_Gyroscope.y,BMI160_Gyroscope.z,"
            + "AK09915_Magnetometer.x,AK09915_Magnetometer.y,AK09915_Magnetometer.z\r\n"
            + rows.joined(separator: "\r\n") + "\r\n"
        let export = try Self.fromExport(["HIMU-2024-01-01_10-00-00.csv": file])
        var udp = HyperIMUDecoder(layout: [.accelerometer, .gyro, .magnetometer])
        Self.expectAgreement(export, Self.fromLive(rows.map { udp.decode(line: $0) }), "HyperIMU UDP")
    }

    // MARK: phyphox (iOS, Android): export zip contents, remote access /get

    @Test(arguments: [PhyphoxPlatform.iOS, .android]) func phyphox(platform: PhyphoxPlatform) throws {
        // phyphox writes acceleration in m/s², Android's sign, on both platforms: iOS multiplies g by −9.81.
        let g = platform == .iOS ? PhoneUnits.phyphoxGravity : PhoneUnits.standardGravity
        let times = Self.truth.indices.map { 0.5 + Double($0) / 100 }
        func csv(_ quantity: String, _ unit: String, _ values: (Truth) -> Vector3) -> String {
            var s = "\"Time (s)\",\"\(quantity) x (\(unit))\",\"\(quantity) y (\(unit))\",\"\(quantity) z (\(unit))\"\n"
            for (t, truth) in zip(times, Self.truth) {
                let v = values(truth)
                s += "\(Self.text(t)),\(Self.text(v.x)),\(Self.text(v.y)),\(Self.text(v.z))\n"
            }
            return s
        }
        let brand = platform == .iOS ? "Apple" : "Google"
        let export = try Self.fromExport([
            "Accelerometer.csv": csv("Acceleration", "m/s^2") { Self.android($0.acceleration, gravity: g) },
            "Gyroscope.csv": csv("Gyroscope", "rad/s", \.rotation),
            "Magnetometer.csv": csv("Magnetic field", "µT", \.field),
            "meta/device.csv": "\"property\",\"value\"\n\"version\",\"1.2.0\"\n\"deviceBrand\",\"\(brand)\"\n\"deviceModel\",\"phone\"\n",
        ])
        // Live: the platform as /meta tells it, one /get answer holding the four instants.
        let meta = Array(#"{"deviceBrand":"\#(brand)","deviceModel":"phone"}"#.utf8)
        var poller = PhyphoxPoller(channels: PhyphoxChannel.stock, platform: PhyphoxPlatform.from(meta: meta))
        func buffer(_ name: String, _ values: [Double]) -> String {
            #""\#(name)":{"size":0,"updateMode":"partial","buffer":[\#(values.map(Self.text).joined(separator: ","))]}"#
        }
        var buffers: [String] = []
        for (channel, values) in zip(PhyphoxChannel.stock, [Self.truth.map { Self.android($0.acceleration, gravity: g) }, Self.truth.map(\.rotation), Self.truth.map(\.field)]) {
            buffers += [buffer(channel.time, times), buffer(channel.x, values.map(\.x)), buffer(channel.y, values.map(\.y)), buffer(channel.z, values.map(\.z))]
        }
        let answer = Array(#"{"buffer":{\#(buffers.joined(separator: ","))},"status":{"session":"s","measuring":true}}"#.utf8)
        Self.expectAgreement(export, Self.fromLive([poller.decode(answer)]), "phyphox \(platform.rawValue)")
    }

    // MARK: SensorServer (Android): live only

    @Test func sensorServerFaceUp() {
        let a = Self.android(Vector3(0, 0, -1))
        let d = SensorServerDecoder.decode(Array(#"{"type":"android.sensor.accelerometer","values":[\#(a.x),\#(a.y),\#(a.z)],"timestamp":3925657519043709,"accuracy":3}"#.utf8))
        let v = try? #require(d.readings.first?.value)
        #expect(v.map { abs($0.x) < 1e-12 && abs($0.y) < 1e-12 && abs($0.z + 1) < 1e-12 } == true, "\(String(describing: v))")
    }
}
