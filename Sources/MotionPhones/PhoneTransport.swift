import Foundation
import MotionSources
import NIOCore
import NIOPosix

/// The network side of a phone source.
protocol PhoneTransport: AnyObject, Sendable {
    /// Binds (listening) or starts connecting; throws when a listening socket cannot be bound.
    func start() throws(SourceError)
    /// Closes everything, asynchronously.
    func stop()
    /// The bound address of a listening transport.
    var localAddress: (host: String, port: Int)? { get }
}

/// The addresses of this machine a phone on the network can reach, for a listener bound to `host`.
func reachableAddresses(forListeningHost host: String) -> [String] {
    guard host == "0.0.0.0" || host == "::" || host == "*" else { return [host] }
    var out: [String] = []
    if let devices = try? System.enumerateDevices() {
        for d in devices {
            guard let a = d.address, let ip = a.ipAddress else { continue }
            if case .v4 = a, !ip.hasPrefix("127.") { out.append(ip) }
        }
    }
    return out.isEmpty ? ["127.0.0.1"] : Array(Set(out)).sorted()
}

/// A `SourceError` for a listener that could not be bound.
func bindError(_ spec: PhoneSpec, _ error: any Error) -> SourceError {
    let text = String(describing: error)
    if let io = error as? IOError {
        if io.errnoCode == EADDRINUSE {
            return SourceError(.unavailable, "\(spec): port \(spec.port) is in use on \(spec.host); stop the other program or pick another port")
        }
        if io.errnoCode == EADDRNOTAVAIL {
            return SourceError(.unavailable, "\(spec): \(spec.host) is not an address of this machine; use one of \(reachableAddresses(forListeningHost: "0.0.0.0").joined(separator: ", ")) or 0.0.0.0")
        }
        if io.errnoCode == EACCES {
            return SourceError(.permissionDenied, "\(spec): no permission to listen on port \(spec.port); use a port above 1023")
        }
    }
    return SourceError(.unavailable, "\(spec): cannot listen: \(text)")
}

/// `ADDRESS:PORT` of a socket address, for messages.
func peerText(_ address: SocketAddress?) -> String {
    guard let address, let ip = address.ipAddress else { return "?" }
    let port = address.port.map(String.init) ?? "?"
    return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
}
