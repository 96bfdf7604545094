import Foundation
import MotionFusion
import MotionRecordings
import MotionSources

/// SensorServer (Android, umer0586): one WebSocket text message per `SensorEvent`,
/// `{"type": "android.sensor.…", "values": [x, y, z, …], "timestamp": ns since boot, "accuracy": n}`.
///
/// Acceleration (m/s², Android sign) is negated and divided by 9.80665; gyroscope rad/s and magnetic
/// field µT pass unchanged. The uncalibrated variants use their first three values. `timestamp` is
/// `SensorEvent.timestamp` (ns, the `elapsedRealtimeNanos` base), so all sensors share one clock.
public enum SensorServerDecoder {
    /// The Android sensor types asked for, in the `types` query of `/sensors/connect`.
    public static let defaultTypes = ["android.sensor.accelerometer", "android.sensor.gyroscope", "android.sensor.magnetic_field"]

    /// The sensor of an Android type name, `nil` for one this project does not use.
    public static func sensor(forType type: String) -> SensorKind? {
        switch type {
        case "android.sensor.accelerometer", "android.sensor.accelerometer_uncalibrated": .accelerometer
        case "android.sensor.gyroscope", "android.sensor.gyroscope_uncalibrated": .gyro
        case "android.sensor.magnetic_field", "android.sensor.magnetic_field_uncalibrated": .magnetometer
        default: nil
        }
    }

    /// Decodes one message. `defaultType` is used when the message has no `type` (the single-sensor
    /// endpoint `/sensor/connect?type=`).
    public static func decode(_ bytes: [UInt8], defaultType: String? = nil) -> PhoneDecoded {
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
/// (a MAC address) is skipped. Acceleration is Android's (m/s², +g on z face up): negated, ÷ 9.80665.
public struct HyperIMUDecoder: Sendable {
    /// The sensor of each triple, in order; `nil` skips a triple.
    public var layout: [SensorKind?]

    /// Creates a decoder; the default layout is accelerometer, gyroscope, magnetometer.
    public init(layout: [SensorKind?] = [.accelerometer, .gyro, .magnetometer]) {
        self.layout = layout
    }

    /// Parses a `sensors=` list: `acc`, `gyro`, `mag` or `skip` (also `-`), comma-separated.
    public static func layout(parsing text: String) -> [SensorKind?]? {
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
    public func decode(line: String) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = "epoch"
        var fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        if fields.first?.hasPrefix("@") == true { return out }
        var time: Double?
        var leading = 0
        while leading < 2, let f = fields.first {
            if let v = Double(f), v.isFinite {
                if v >= 1e11, time == nil { time = v / 1000; fields.removeFirst(); leading += 1; continue }
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
        for (i, sensor) in layout.enumerated() {
            guard let sensor else { continue }
            guard let x = Double(fields[3 * i]), let y = Double(fields[3 * i + 1]), let z = Double(fields[3 * i + 2]),
                  x.isFinite, y.isFinite, z.isFinite
            else {
                out.rejected.append("\(sensor.rawValue): not numbers")
                continue
            }
            let value = sensor == .accelerometer ? PhoneUnits.androidAcceleration(x, y, z) : Vector3(x, y, z)
            out.readings.append(PhoneReading(sensor: sensor, phoneTime: time, value: value))
        }
        return out
    }
}

/// SensorLog (iOS, B. Thomas): flat records, as JSON objects whose values are strings, or CSV rows
/// under a `name(unit)` header. Both are read as a dictionary by field name without the unit.
///
/// Fields used, Core Motion's own units and signs (SensorLog writes Core Motion values unchanged):
/// `accelerometerTimestamp_sinceReboot` + `accelerometerAcceleration{X,Y,Z}` (g);
/// `gyroTimestamp_sinceReboot` + `gyroRotation{X,Y,Z}` (rad/s), else `motionRotationRate{X,Y,Z}`
/// at `motionTimestamp_sinceReboot`; `magnetometerTimestamp_sinceReboot` + `magnetometer{X,Y,Z}` (µT).
/// If no raw accelerometer is logged, `motionGravity + motionUserAcceleration` at the motion time.
/// Rows repeat a sensor's last value (sample and hold); the source drops a reading whose phone time
/// did not advance.
public struct SensorLogDecoder: Sendable {
    private var header: [String]?

    /// Creates a decoder.
    public init() {}

    /// The field name of a CSV header cell: `accelerometerAccelerationX(G)` → `accelerometerAccelerationX`.
    public static func fieldName(_ cell: Substring) -> String {
        var s = cell.trimmingCharacters(in: .whitespaces)
        if s.hasPrefix("\"") && s.hasSuffix("\"") && s.count >= 2 { s = String(s.dropFirst().dropLast()) }
        if let paren = s.firstIndex(of: "(") { s = String(s[..<paren]) }
        return s
    }

    /// Decodes one JSON record.
    public func decode(json bytes: [UInt8]) -> PhoneDecoded {
        guard let object = parseJSON(bytes) as? [String: Any] else {
            var out = PhoneDecoded()
            out.rejected.append("not a JSON object")
            return out
        }
        return Self.decode(record: { jsonNumber(object[$0]) })
    }

    /// Decodes one CSV line: the first one seen is the header.
    public mutating func decode(csvLine line: String) -> PhoneDecoded {
        let separator: Character = line.contains(",") ? "," : (line.contains(";") ? ";" : "\t")
        let cells = line.split(separator: separator, omittingEmptySubsequences: false)
        if header == nil || cells.first.map({ Self.fieldName($0) == header?.first }) == true && Double(cells[0]) == nil {
            header = cells.map(Self.fieldName)
            return PhoneDecoded()
        }
        guard let header else { return PhoneDecoded() }
        var index: [String: Int] = [:]
        for (i, name) in header.enumerated() { index[name] = i }
        return Self.decode(record: { name in
            guard let i = index[name], i < cells.count else { return nil }
            guard let v = Double(cells[i].trimmingCharacters(in: .whitespaces)), v.isFinite else { return nil }
            return v
        })
    }

    /// Decodes one record given a lookup of its numeric fields by name.
    static func decode(record field: (String) -> Double?) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = "sinceReboot"
        func vector(_ x: String, _ y: String, _ z: String) -> Vector3? {
            guard let a = field(x), let b = field(y), let c = field(z) else { return nil }
            return Vector3(a, b, c)
        }
        let motionTime = field("motionTimestamp_sinceReboot")
        if let t = field("accelerometerTimestamp_sinceReboot"),
           let v = vector("accelerometerAccelerationX", "accelerometerAccelerationY", "accelerometerAccelerationZ") {
            out.readings.append(PhoneReading(sensor: .accelerometer, phoneTime: t, value: v))
        } else if let t = motionTime, let g = vector("motionGravityX", "motionGravityY", "motionGravityZ"),
                  let u = vector("motionUserAccelerationX", "motionUserAccelerationY", "motionUserAccelerationZ") {
            out.readings.append(PhoneReading(sensor: .accelerometer, phoneTime: t, value: g + u))
        }
        if let t = field("gyroTimestamp_sinceReboot"), let v = vector("gyroRotationX", "gyroRotationY", "gyroRotationZ") {
            out.readings.append(PhoneReading(sensor: .gyro, phoneTime: t, value: v))
        } else if let t = motionTime, let v = vector("motionRotationRateX", "motionRotationRateY", "motionRotationRateZ") {
            out.readings.append(PhoneReading(sensor: .gyro, phoneTime: t, value: v))
        }
        if let t = field("magnetometerTimestamp_sinceReboot"), let v = vector("magnetometerX", "magnetometerY", "magnetometerZ") {
            out.readings.append(PhoneReading(sensor: .magnetometer, phoneTime: t, value: v))
        }
        if out.readings.isEmpty { out.rejected.append("no motion fields") }
        return out
    }
}

/// Sensor Logger (iOS, Android) HTTP push: the JSON `{messageId, sessionId, deviceId, payload}` of
/// `MotionRecordings`' ``SensorLoggerPush`` decoder, converted by its ``SensorLoggerPushConverter``
/// (the same code that serves MQTT), with time left on the phone's clock (epoch seconds).
public struct SensorLoggerDecoder: Sendable {
    private var converter: SensorLoggerPushConverter
    private var reorder = SensorLoggerPushReorderBuffer(window: 1)

    /// Creates a decoder for one phone with the given acceleration convention.
    public init(convention: SensorLoggerConvention) {
        converter = SensorLoggerPushConverter(convention: convention, epochOffsetNanoseconds: 0)
    }

    /// Readings dropped by the converter as not later than the last of their sensor.
    public var discardedLate: Int { converter.discardedLate }
    /// Messages dropped as duplicates.
    public var duplicates: Int { reorder.duplicates }

    /// Decodes one request body.
    public mutating func decode(body: [UInt8]) -> (PhoneDecoded, device: String?) {
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
    public mutating func decode(message: SensorLoggerPushMessage) -> PhoneDecoded {
        var out = PhoneDecoded()
        out.clock = message.deviceId
        for ready in reorder.add(message) {
            for s in converter.samples(from: ready) {
                out.readings.append(PhoneReading(sensor: s.sensor, phoneTime: s.timestamp, value: s.value))
            }
        }
        return out
    }
}
