import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources

/// SensorServer (Android, umer0586): one WebSocket text message per `SensorEvent`,
/// `{"type": "android.sensor.…", "values": [x, y, z, …], "timestamp": ns since boot, "accuracy": n}`.
///
/// Acceleration (m/s², Android sign) is negated and divided by 9.80665; gyroscope rad/s and magnetic
/// field µT pass unchanged. The uncalibrated variants use their first three values. `timestamp` is
/// `SensorEvent.timestamp` (ns, the `elapsedRealtimeNanos` base), so all sensors share one clock.
package enum SensorServerDecoder {
    /// The Android sensor types asked for, in the `types` query of `/sensors/connect`.
    package static let defaultTypes = ["android.sensor.accelerometer", "android.sensor.gyroscope", "android.sensor.magnetic_field"]

    /// The sensor of an Android type name, `nil` for one this project does not use.
    package static func sensor(forType type: String) -> SensorKind? {
        switch type {
        case "android.sensor.accelerometer", "android.sensor.accelerometer_uncalibrated": .accelerometer
        case "android.sensor.gyroscope", "android.sensor.gyroscope_uncalibrated": .gyro
        case "android.sensor.magnetic_field", "android.sensor.magnetic_field_uncalibrated": .magnetometer
        default: nil
        }
    }

    /// The pressure (hPa → kPa), gravity (m/s², Android's sign → g, Core Motion's sign) or rotation
    /// vector (ENU → Core Motion's north-west-up, ``PhoneFrames``) of an extra Android sensor type.
    static func extraQuantity(type: String, values: [Any]?) -> PhoneQuantity? {
        let v = (values ?? []).map { jsonNumber($0) }
        guard !v.isEmpty, v.allSatisfy({ $0 != nil }) else { return nil }
        let n = v.compactMap { $0 }
        switch type {
        case "android.sensor.pressure":
            return .pressure(n[0] / 10)
        case "android.sensor.gravity" where n.count >= 3:
            return .gravity(PhoneUnits.androidAcceleration(n[0], n[1], n[2]))
        case "android.sensor.rotation_vector", "android.sensor.game_rotation_vector", "android.sensor.geomagnetic_rotation_vector":
            guard let q = PhoneFrames.androidQuaternion(rotationVector: Array(n.prefix(4))),
                  let cm = PhoneFrames.coreMotionAttitude(fromAndroid: q) else { return nil }
            return .attitude(cm)
        default:
            return nil
        }
    }

    /// Decodes one message. `defaultType` is used when the message has no `type` (the single-sensor
    /// endpoint `/sensor/connect?type=`).
    package static func decode(_ bytes: [UInt8], defaultType: String? = nil) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = "elapsedRealtime"
        guard let object = parseJSON(bytes) as? [String: Any] else {
            out.rejected.append("not a JSON object")
            return out
        }
        guard let type = (object["type"] as? String) ?? defaultType else {
            out.rejected.append("no type")
            return out
        }
        if let extra = extraQuantity(type: type, values: object["values"] as? [Any]) {
            guard let ns = jsonNumber(object["timestamp"]) else {
                out.rejected.append("\(type): no timestamp")
                return out
            }
            out.extras.append(PhoneExtraReading(phoneTime: ns / 1e9, quantity: extra))
            return out
        }
        guard let sensor = sensor(forType: type) else { return out }
        guard let values = object["values"] as? [Any], values.count >= 3,
              let x = jsonNumber(values[0]), let y = jsonNumber(values[1]), let z = jsonNumber(values[2])
        else {
            out.rejected.append("\(type): values missing or not finite")
            return out
        }
        guard let ns = jsonNumber(object["timestamp"]) else {
            out.rejected.append("\(type): no timestamp")
            return out
        }
        let value = sensor == .accelerometer ? PhoneUnits.androidAcceleration(x, y, z) : Vector3(x, y, z)
        out.readings.append(PhoneReading(sensor: sensor, phoneTime: ns / 1e9, value: value))
        return out
    }
}

/// HyperIMU (Android, ianovir): CSV lines, three values per sensor in the order chosen in the app's
/// settings, optionally led by a timestamp (epoch ms) and a MAC address, optionally followed by
/// GPS values and NMEA sentences (ignored).
///
/// The line carries no sensor names, so the order is configured: ``layout`` lists, per triple, the
/// sensor it is (`nil` for a triple to skip, such as a rotation vector or a linear acceleration).
/// A leading field at or above 1e11 is taken as the epoch-ms timestamp; one that is not a number
/// (a MAC address) is skipped. Values, time and repeated rows follow `MotionRecordingFormats`'
/// ``HyperIMURowDecoder``, the rules of the HyperIMU file reader.
package struct HyperIMUDecoder: Sendable {
    /// The sensor of each triple, in order; `nil` skips a triple.
    package var layout: [SensorKind?]
    private var rows = HyperIMURowDecoder()

    /// Creates a decoder; the default layout is accelerometer, gyroscope, magnetometer.
    package init(layout: [SensorKind?] = [.accelerometer, .gyro, .magnetometer]) {
        self.layout = layout
    }

    /// Parses a `sensors=` list: `acc`, `gyro`, `mag` or `skip` (also `-`), comma-separated.
    package static func layout(parsing text: String) -> [SensorKind?]? {
        var out: [SensorKind?] = []
        for part in text.split(separator: ",") {
            switch part.trimmingCharacters(in: .whitespaces).lowercased() {
            case "acc", "accelerometer": out.append(.accelerometer)
            case "gyro", "gyroscope": out.append(.gyro)
            case "mag", "magnetometer", "magnetic_field": out.append(.magnetometer)
            case "skip", "-", "_": out.append(nil)
            default: return nil
            }
        }
        return out.isEmpty ? nil : out
    }

    /// Decodes one line.
    package mutating func decode(line: String) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = "epoch"
        var fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        if fields.first?.hasPrefix("@") == true { return out }
        var time: Double?
        var leading = 0
        while leading < 2, let f = fields.first {
            if let v = Double(f), v.isFinite {
                if v >= 1e11, time == nil { time = HyperIMURowDecoder.seconds(epochMilliseconds: v); fields.removeFirst(); leading += 1; continue }
                break
            }
            if f.contains(":") || f.isEmpty { fields.removeFirst(); leading += 1; continue }
            // A header row (`timestamp,MPL_Gyroscope.x,…`) or text: not data.
            out.rejected.append("not a data line")
            return out
        }
        let needed = layout.count * 3
        guard fields.count >= needed else {
            out.rejected.append("\(fields.count) values, expected at least \(needed)")
            return out
        }
        guard rows.isNew(time: time) else { return out }
        for (i, sensor) in layout.enumerated() {
            guard let sensor else { continue }
            guard let x = Double(fields[3 * i]), let y = Double(fields[3 * i + 1]), let z = Double(fields[3 * i + 2]),
                  x.isFinite, y.isFinite, z.isFinite
            else {
                out.rejected.append("\(sensor.rawValue): not numbers")
                continue
            }
            out.readings.append(PhoneReading(sensor: sensor, phoneTime: time, value: HyperIMURowDecoder.value(sensor, x, y, z)))
        }
        return out
    }
}

/// SensorLog (iOS, B. Thomas): flat records, as JSON objects whose values are strings, or CSV rows
/// under a `name(unit)` header. Both are read as a dictionary by field name without the unit.
///
/// The samples come from `MotionRecordingFormats`' ``SensorLogRecordDecoder``, the decoder the SensorLog
/// file reader uses (Core Motion's own units and signs; a sample only when its sensor's timestamp
/// advances). Extras: `motionQuaternion{X,Y,Z,W}` (the `CMAttitude` quaternion, unchanged) and
/// `motionGravity{X,Y,Z}` (g) at the motion time; `altimeterPressure` (kPa) at
/// `altimeterTimestamp_sinceReboot`.
package struct SensorLogDecoder: Sendable {
    private var header: [String]?
    private var records = SensorLogRecordDecoder()

    /// Creates a decoder.
    package init() {}

    /// The field name of a CSV header cell: `accelerometerAccelerationX(G)` → `accelerometerAccelerationX`.
    package static func fieldName(_ cell: Substring) -> String {
        var s = cell.trimmingCharacters(in: .whitespaces)
        if s.hasPrefix("\"") && s.hasSuffix("\"") && s.count >= 2 { s = String(s.dropFirst().dropLast()) }
        if let paren = s.firstIndex(of: "(") { s = String(s[..<paren]) }
        return s
    }

    /// Decodes one JSON record.
    package mutating func decode(json bytes: [UInt8]) -> PhoneDecoded {
        guard let object = parseJSON(bytes) as? [String: Any] else {
            var out = PhoneDecoded()
            out.rejected.append("not a JSON object")
            return out
        }
        return decode(has: { object[$0] != nil }, field: { jsonNumber(object[$0]) })
    }

    /// Decodes one CSV line: the first one seen is the header.
    package mutating func decode(csvLine line: String) -> PhoneDecoded {
        let separator: Character = line.contains(",") ? "," : (line.contains(";") ? ";" : "\t")
        let cells = line.split(separator: separator, omittingEmptySubsequences: false)
        if header == nil || cells.first.map({ Self.fieldName($0) == header?.first }) == true && Double(cells[0]) == nil {
            header = cells.map(Self.fieldName)
            return PhoneDecoded()
        }
        guard let header else { return PhoneDecoded() }
        var index: [String: Int] = [:]
        for (i, name) in header.enumerated() where index[name] == nil { index[name] = i }
        return decode(has: { index[$0] != nil }, field: { name in
            guard let i = index[name], i < cells.count else { return nil }
            guard let v = Double(cells[i].trimmingCharacters(in: .whitespaces)), v.isFinite else { return nil }
            return v
        })
    }

    /// Decodes one record given which fields it has and a lookup of its numeric fields by name.
    mutating func decode(has: (String) -> Bool, field: (String) -> Double?) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = "sinceReboot"
        for s in records.samples(SensorLogRecordDecoder.sources(has: has), value: field) {
            out.readings.append(PhoneReading(sensor: s.sensor, phoneTime: s.timestamp, value: s.value))
        }
        func vector(_ x: String, _ y: String, _ z: String) -> Vector3? {
            guard let a = field(x), let b = field(y), let c = field(z) else { return nil }
            return Vector3(a, b, c)
        }
        if let t = field("motionTimestamp_sinceReboot") {
            if let qx = field("motionQuaternionX"), let qy = field("motionQuaternionY"), let qz = field("motionQuaternionZ"),
               let qw = field("motionQuaternionW"),
               let q = PhoneFrames.coreMotionAttitude(fromApple: Quaternion(w: qw, x: qx, y: qy, z: qz)) {
                out.extras.append(PhoneExtraReading(phoneTime: t, quantity: .attitude(q)))
            }
            if let g = vector("motionGravityX", "motionGravityY", "motionGravityZ") {
                out.extras.append(PhoneExtraReading(phoneTime: t, quantity: .gravity(g)))
            }
        }
        if let p = field("altimeterPressure"), p > 0 {
            out.extras.append(PhoneExtraReading(phoneTime: field("altimeterTimestamp_sinceReboot"), quantity: .pressure(p)))
        }
        // A row that only repeats held values is normal traffic; one without any sensor time is not.
        let times = ["accelerometerTimestamp_sinceReboot", "gyroTimestamp_sinceReboot", "magnetometerTimestamp_sinceReboot", "motionTimestamp_sinceReboot"]
        if out.readings.isEmpty && out.extras.isEmpty && !times.contains(where: { field($0) != nil }) {
            out.rejected.append("no motion fields")
        }
        return out
    }
}

/// Sensor Logger (iOS, Android) HTTP push: the JSON `{messageId, sessionId, deviceId, payload}` of
/// `MotionRecordingFormats`' ``SensorLoggerPush`` decoder, converted by its ``SensorLoggerPushConverter``
/// (the same code that serves MQTT, with the units and signs of the export reader,
/// `SensorLoggerConversion.swift`), with time left on the phone's clock (epoch seconds).
package struct SensorLoggerDecoder: Sendable {
    private var converter: SensorLoggerPushConverter
    private var reorder = SensorLoggerPushReorderBuffer(window: 1)

    /// Creates a decoder for one phone with the given acceleration convention; `nil` (the default)
    /// infers it from the phone's readings (``SensorLoggerPushConverter``).
    package init(convention: SensorLoggerConvention? = nil) {
        converter = SensorLoggerPushConverter(convention: convention, epochOffsetNanoseconds: 0)
    }

    /// The convention in use (given, or inferred so far).
    package var convention: SensorLoggerConvention { converter.effectiveConvention }

    /// Readings dropped by the converter as not later than the last of their sensor.
    package var discardedLate: Int { converter.discardedLate }
    /// Messages dropped as duplicates.
    package var duplicates: Int { reorder.duplicates }

    /// `barometer` (`pressure` hPa → kPa); `gravity` (m/s² → g; standardised: Android's sign, negated);
    /// `orientation` (`qw,qx,qy,qz`; standardised: Android's ENU frame, turned to Core Motion's
    /// north-west-up, ``PhoneFrames``; apple: the `CMAttitude` quaternion, `xTrueNorthZVertical`).
    func extra(_ e: SensorLoggerPushEntry) -> PhoneQuantity? {
        let v = e.values
        switch e.name {
        case "barometer":
            guard let p = v["pressure"], p.isFinite, p > 0 else { return nil }
            return .pressure(p / 10)
        case "gravity":
            guard let x = v["x"], let y = v["y"], let z = v["z"] else { return nil }
            let g = convention.acceleration(metresPerSecondSquared: Vector3(x, y, z))
            return g.x.isFinite && g.y.isFinite && g.z.isFinite ? .gravity(g) : nil
        case "orientation":
            guard let w = v["qw"], let x = v["qx"], let y = v["qy"], let z = v["qz"] else { return nil }
            let q = Quaternion(w: w, x: x, y: y, z: z)
            let cm = convention == .apple ? PhoneFrames.coreMotionAttitude(fromApple: q) : PhoneFrames.coreMotionAttitude(fromAndroid: q)
            return cm.map { .attitude($0) }
        default:
            return nil
        }
    }

    /// Decodes one request body.
    package mutating func decode(body: [UInt8]) -> (PhoneDecoded, device: String?) {
        let message: SensorLoggerPushMessage
        do {
            message = try SensorLoggerPush.decode(body)
        } catch {
            var out = PhoneDecoded()
            out.rejected.append(error.message)
            return (out, nil)
        }
        return (decode(message: message), message.deviceId)
    }

    /// Converts one decoded message; readings stay on the phone's clock (epoch seconds).
    package mutating func decode(message: SensorLoggerPushMessage) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = message.deviceId
        for ready in reorder.add(message) {
            for s in converter.samples(from: ready) {
                out.readings.append(PhoneReading(sensor: s.sensor, phoneTime: s.timestamp, value: s.value))
            }
            for e in ready.payload {
                if let q = extra(e) { out.extras.append(PhoneExtraReading(phoneTime: epochSeconds(e.time), quantity: q)) }
            }
        }
        return out
    }
}
