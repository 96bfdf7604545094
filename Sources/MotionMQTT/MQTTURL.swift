/// A broker address with a topic: `mqtt://[USER:PASS@]HOST[:PORT]/TOPIC[?key=value&…]` (`mqtts://` for TLS,
/// `mqtt+ws://` and `mqtt+wss://` for MQTT over WebSocket, ports 8000 and 8884 by default).
///
/// The topic is everything after the first `/` up to `?`, percent-decoded, so the MQTT wildcards
/// `+` and `#` can be written as they are (`mqtt://localhost:1883/fleet/#`). User and password are
/// percent-decoded. The port defaults to 1883 (8883 for `mqtts`). IPv6 hosts go in brackets.
package struct MQTTURL: Sendable, Hashable, CustomStringConvertible {
    /// Whether TLS is used (`mqtts://`, `mqtt+wss://`).
    package var useTLS: Bool
    /// Whether MQTT travels over WebSocket (`mqtt+ws://`, `mqtt+wss://`; HTTP path from `ws-path=`, default `/mqtt`).
    package var webSocket: Bool = false
    /// Host name or address.
    package var host: String
    /// TCP port.
    package var port: Int
    /// User name, if any.
    package var username: String?
    /// Password, if any.
    package var password: String?
    /// Topic name or filter (may be empty).
    package var topic: String
    /// Query parameters, in order.
    package var query: [(String, String)]

    /// The value of query parameter `key`, if present.
    package func parameter(_ key: String) -> String? { query.first { $0.0 == key }?.1 }

    /// The URL without the password (for logs and source identifiers).
    package var description: String {
        let user = username.map { "\($0)@" } ?? ""
        let h = host.contains(":") ? "[\(host)]" : host
        let scheme = webSocket ? (useTLS ? "mqtt+wss" : "mqtt+ws") : (useTLS ? "mqtts" : "mqtt")
        return "\(scheme)://\(user)\(h):\(port)/\(topic)"
    }

    package static func == (a: MQTTURL, b: MQTTURL) -> Bool { a.description == b.description && a.password == b.password && a.query.map(\.0) == b.query.map(\.0) && a.query.map(\.1) == b.query.map(\.1) }
    package func hash(into h: inout Hasher) { h.combine(description) }

    /// Parses a URL; throws ``MQTTProtocolError`` with one line saying what is wrong.
    package init(parsing text: String) throws(MQTTProtocolError) {
        var rest: Substring
        if text.hasPrefix("mqtt://") { useTLS = false; rest = text.dropFirst(7) }
        else if text.hasPrefix("mqtts://") { useTLS = true; rest = text.dropFirst(8) }
        else if text.hasPrefix("mqtt+ws://") { useTLS = false; webSocket = true; rest = text.dropFirst(10) }
        else if text.hasPrefix("mqtt+wss://") { useTLS = true; webSocket = true; rest = text.dropFirst(11) }
        else { throw MQTTProtocolError("'\(text)' is not an MQTT URL; expected mqtt://[USER:PASS@]HOST:PORT/TOPIC") }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash]
        rest = slash < rest.endIndex ? rest[rest.index(after: slash)...] : ""
        username = nil
        password = nil
        if let at = authority.lastIndex(of: "@") {
            let info = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = info.firstIndex(of: ":") {
                username = try Self.percentDecode(info[..<colon])
                password = try Self.percentDecode(info[info.index(after: colon)...])
            } else {
                username = try Self.percentDecode(info)
            }
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw MQTTProtocolError("'\(text)': unclosed '[' in the host") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw MQTTProtocolError("'\(text)': unexpected '\(after)' after the host") }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw MQTTProtocolError("'\(text)' has no host") }
        if let portText {
            guard let p = Int(portText), (1...65_535).contains(p) else { throw MQTTProtocolError("'\(text)': port '\(portText)' is not a number from 1 to 65535") }
            port = p
        } else {
            port = webSocket ? (useTLS ? 8884 : 8000) : (useTLS ? 8883 : 1883)
        }
        var q: [(String, String)] = []
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") where !pair.isEmpty {
                let kv = pair.split(separator: "=", maxSplits: 1)
                q.append((try Self.percentDecode(kv[0]), kv.count > 1 ? try Self.percentDecode(kv[1]) : ""))
            }
            rest = rest[..<question]
        }
        query = q
        topic = try Self.percentDecode(rest)
    }

    static func percentDecode(_ s: Substring) throws(MQTTProtocolError) -> String {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else {
                    throw MQTTProtocolError("bad percent escape in '\(s)'")
                }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        guard let out = String(validating: bytes, as: UTF8.self) else { throw MQTTProtocolError("'\(s)' is not UTF-8 once decoded") }
        return out
    }

    /// A client configuration for this broker (credentials, TLS), with `clientID`, clean session off.
    package func clientConfiguration(clientID: String, keepAlive: UInt16 = 30) -> MQTTClientConfiguration {
        var c = MQTTClientConfiguration(host: host, port: port, useTLS: useTLS,
                                        connect: MQTTConnect(clientID: clientID, cleanSession: false, keepAlive: keepAlive,
                                                             username: username, password: password.map { Array($0.utf8) }))
        if webSocket { c.webSocketPath = parameter("ws-path") ?? "/mqtt" }
        return c
    }
}
