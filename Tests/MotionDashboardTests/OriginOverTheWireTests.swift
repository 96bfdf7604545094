import Foundation
import MotionTestSupport
import Testing
@testable import MotionDashboard

/// The `Origin` rule of PROTOCOL.md on a real server and socket: a WebSocket upgrade from another
/// origin gets 403 (Hummingbird alone would answer 400), the page's own origin and tools get 101.
@Suite struct OriginOverTheWireTests {
    /// Sends one raw HTTP/1.1 request to 127.0.0.1:`port` and returns the status code of the answer,
    /// on a thread of its own: the server answers from the cooperative pool, so a test that waited for
    /// it on a pool thread could hold the very thread the answer needs (two on a 2-core machine).
    static func status(port: Int, headers: [String]) async throws -> Int? {
        try await offThePool { try blockingStatus(port: port, headers: headers) }
    }

    /// ``status(port:headers:)`` on the calling thread (blocks in `recv` until the answer, at most 150 s).
    static func blockingStatus(port: Int, headers: [String]) throws -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 150, tv_usec: 0)  // generous: the whole suite runs in parallel on 2 cores, and CPU-bound tests can hold both of the cooperative pool's threads for minutes
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let request = (["GET /ws HTTP/1.1", "Host: 127.0.0.1:\(port)"] + headers + ["", ""]).joined(separator: "\r\n")
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n > 12 else { return nil }
        let line = String(decoding: buffer[..<n], as: UTF8.self)
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    @Test(.timeLimit(.minutes(5))) func aForeignOriginGets403AndTheOwnOrigin101() async throws {
        let server = DashboardServer(feed: ScriptedFeed(), host: "127.0.0.1", port: 0)
        let (urls, continuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await server.run { url in continuation.yield(url) } }
        defer { task.cancel() }
        var iterator = urls.makeAsyncIterator()
        let url = try #require(await iterator.next())
        let port = try #require(url.port)
        let upgrade = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13",
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
        let foreign = try await Self.status(port: port, headers: upgrade + ["Origin: https://evil.example"])
        #expect(foreign == 403)
        let otherPort = try await Self.status(port: port, headers: upgrade + ["Origin: http://127.0.0.1:\(port + 1)"])
        #expect(otherPort == 403)
        let own = try await Self.status(port: port, headers: upgrade + ["Origin: http://127.0.0.1:\(port)"])
        #expect(own == 101)
        let tool = try await Self.status(port: port, headers: upgrade)
        #expect(tool == 101, "tools send no Origin")
        // The server is still up after refusing.
        let plain = try await Self.status(port: port, headers: ["Origin: https://evil.example"])
        #expect(plain == 403, "plain GET /ws is refused by the router")
        task.cancel()
        _ = await task.result
    }
}
