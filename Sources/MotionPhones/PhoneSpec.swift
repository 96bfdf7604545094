import MotionSources

/// Which phone app a source speaks to.
package enum PhoneApp: String, Sendable, Hashable, CaseIterable {
    /// Sensor Logger (iOS, Android): the phone POSTs JSON batches to us (HTTP push).
    case sensorLogger = "sensorlogger"
    /// SensorServer (Android): we connect to the phone's WebSocket server.
    case sensorServer = "sensorserver"
    /// phyphox (iOS, Android): we poll the phone's REST interface.
    case phyphox = "phyphox"
    /// SensorLog (iOS): we connect to the phone's TCP stream.
    case sensorLog = "sensorlog"
    /// HyperIMU (Android): the phone sends UDP datagrams to us.
    case hyperIMU = "hyperimu"

    /// Whether the phone connects to us (we listen) rather than us to it.
    package var listens: Bool { self == .sensorLogger || self == .hyperIMU }

    /// The app's display name.
    package var displayName: String {
        switch self {
        case .sensorLogger: "Sensor Logger"
        case .sensorServer: "SensorServer"
        case .phyphox: "phyphox"
        case .sensorLog: "SensorLog"
        case .hyperIMU: "HyperIMU"
        }
    }

    /// The platform the app runs on, as far as the protocol tells.
    package var platform: String {
        switch self {
        case .sensorLogger: "iOS or Android"
        case .sensorServer, .hyperIMU: "Android"
        case .phyphox: "iOS or Android"
        case .sensorLog: "iOS"
        }
    }
}

/// A parsed phone source specification: `APP://HOST:PORT[?key=value&…]`.
///
/// Common parameters: `silence=S` seconds without data before handlers get an error (default 5,
/// 0.1…86400); `motion=phone|fused`, where device motion comes from: the phone's own attitude and
/// gravity (`own` is accepted for `phone`, the word the BNO055's `i2c:` source takes), or fusion of the raw sensors here (the default; HyperIMU takes only `fused`). Sensor Logger: `token=T` (a request must carry `Authorization: Bearer T`,
/// `X-Token: T` or `?token=T` in its URL), `convention=standardised|apple` (default: inferred per phone from its raw acceleration, as the export reader does),
/// `max-body=BYTES` (default 4 MiB). HyperIMU: `sensors=acc,gyro,mag` (the order set in the app;
/// `skip` for a triple to ignore). Connecting sources: `backoff=S`, the longest wait between
/// reconnection attempts (default 5). phyphox: `interval=S` between polls (default 0.05).
package struct PhoneSpec: Sendable, Hashable, CustomStringConvertible {
    /// The app.
    package var app: PhoneApp
    /// The host: the address to listen on (listening apps) or the phone's address (connecting apps).
    package var host: String
    /// The TCP or UDP port; 0 lets a listening source pick a free one.
    package var port: Int
    /// The query parameters, by name.
    package var parameters: [String: String]

    /// Parses a spec.
    /// - Throws: ``SourceError`` (`.unavailable`) with a one-line explanation.
    package init(parsing spec: String) throws(SourceError) {
        guard let sep = spec.range(of: "://") else {
            throw SourceError(.unavailable, "'\(spec)': expected APP://HOST:PORT with APP one of \(PhoneApp.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let scheme = spec[..<sep.lowerBound].lowercased()
        guard let app = PhoneApp(rawValue: scheme) else {
            throw SourceError(.unavailable, "'\(spec)': unknown phone app '\(scheme)'")
        }
        var rest = String(spec[sep.upperBound...])
        var parameters: [String: String] = [:]
        if let q = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: q)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                parameters[String(kv[0])] = kv.count > 1 ? String(kv[1]).removingPercentEncodingSafely : ""
            }
            rest = String(rest[..<q])
        }
        if rest.hasSuffix("/") { rest.removeLast() }
        let host: String
        let portText: Substring
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw SourceError(.unavailable, "'\(spec)': no port; expected \(scheme)://HOST:PORT") }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { throw SourceError(.unavailable, "'\(spec)': no port; expected \(scheme)://HOST:PORT") }
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else { throw SourceError(.unavailable, "'\(spec)': no host; expected \(scheme)://HOST:PORT") }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw SourceError(.unavailable, "'\(spec)': port '\(portText)' must be a number from 0 to 65535")
        }
        if port == 0 && !app.listens {
            throw SourceError(.unavailable, "'\(spec)': port 0 only makes sense for a source that listens")
        }
        self.app = app
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    /// A number parameter within bounds, or `fallback` when absent.
    /// - Throws: ``SourceError`` when present but not a number within `range`.
    package func number(_ name: String, default fallback: Double, in range: ClosedRange<Double>) throws(SourceError) -> Double {
        guard let text = parameters[name] else { return fallback }
        guard let v = Double(text), v.isFinite, range.contains(v) else {
            throw SourceError(.unavailable, "\(self): \(name)=\(text) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    /// `APP://HOST:PORT` (parameters left out, so a token is never printed).
    package var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "\(app.rawValue)://\(h):\(port)"
    }
}

extension String {
    fileprivate var removingPercentEncodingSafely: String {
        var bytes: [UInt8] = []
        var it = Array(utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%"), it.count >= 2,
               let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
