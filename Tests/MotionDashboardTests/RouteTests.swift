import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import Testing
@testable import MotionDashboard

/// The HTTP routes, through Hummingbird's router test client: no sockets.
@Suite struct RouteTests {
    private func withApp(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let hub = DashboardHub(feed: ScriptedFeed())
        let app = Application(router: DashboardApplication.makeRouter(hub: hub))
        try await app.test(.router, test)
    }

    @Test func thePageAndItsAssetsAreServedFromTheBinary() async throws {
        try await withApp { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                let html = String(buffer: response.body)
                #expect(html.contains(#"<script src="/dashboard.js">"#))
                for sensor in DashboardSensor.allCases {
                    #expect(html.contains(#"id="panel-\#(sensor.rawValue)""#))
                }
                #expect(html.contains(#"type="range" min="10" max="100" step="5""#))
                #expect(!html.contains("http://") && !html.contains("https://"), "no CDN: every asset is local")
                #expect(response.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("default-src 'self'") == true)
            }
            try await client.execute(uri: "/dashboard.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                let js = String(buffer: response.body)
                #expect(js.contains("window.dashboardFrames"))
                #expect(js.contains("requestAnimationFrame"))
            }
            try await client.execute(uri: "/dashboard.css", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/css; charset=utf-8")
            }
            try await client.execute(uri: "/nope", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func theAPIDescribesTheSourceAndState() async throws {
        try await withApp { client in
            try await client.execute(uri: "/api/hello", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let hello = json(String(buffer: response.body))
                #expect(hello["type"] as? String == "hello")
                #expect((hello["source"] as? [String: Any])?["identifier"] as? String == "test:scripted")
            }
            try await client.execute(uri: "/api/state", method: .get) { response in
                let state = json(String(buffer: response.body))
                #expect(state["type"] as? String == "state")
                #expect(state["intervalMs"] as? Int == 20)
                #expect(state["clients"] as? Int == 0)
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(String(buffer: response.body) == "ok\n")
            }
        }
    }

    @Test func webSocketsFromOtherSitesAreRefused() async throws {
        try await withApp { client in
            // The router accepts the upgrade (200) for the page's own origin and for tools…
            try await client.execute(
                uri: "/ws", method: .get,
                headers: [.origin: "http://localhost"]
            ) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/ws", method: .get) { response in
                #expect(response.status == .ok)
            }
            // …and refuses any other origin: a web page elsewhere cannot drive the sensors.
            try await client.execute(
                uri: "/ws", method: .get,
                headers: [.origin: "https://evil.example"]
            ) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(
                uri: "/ws", method: .get,
                headers: [.origin: "http://localhost:9999"]
            ) { response in
                #expect(response.status == .forbidden)
            }
        }
    }

    @Test func originRules() {
        let ok: [(String, String)] = [("localhost:8080", "http://localhost:8080"), ("[::1]:8080", "http://[::1]:8080"),
                                      ("127.0.0.1:80", "http://127.0.0.1:80")]
        for (host, origin) in ok {
            #expect(DashboardApplication.isSameOrigin(origin: origin, authority: host), "\(origin)")
        }
        #expect(!DashboardApplication.isSameOrigin(origin: "null", authority: "localhost:8080"))
        #expect(!DashboardApplication.isSameOrigin(origin: "file://localhost:8080", authority: "localhost:8080"))
        #expect(!DashboardApplication.isSameOrigin(origin: "http://localhost:8080", authority: nil))
        #expect(DashboardApplication.isSameOrigin(origin: nil, authority: "localhost:8080"), "tools send no Origin")
        #expect(DashboardApplication.isSameOrigin(origin: "ws://127.0.0.1", authority: "127.0.0.1:8080"), "WebSocket libraries")
        #expect(!DashboardApplication.isSameOrigin(origin: "https://localhost:8080.evil.example", authority: "localhost:8080"))
    }

    @Test func loopbackHosts() {
        for h in ["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"] { #expect(DashboardServer.isLoopback(host: h), "\(h)") }
        for h in ["0.0.0.0", "192.168.1.2", "::", "example.com", "127.0.0.256"] { #expect(!DashboardServer.isLoopback(host: h), "\(h)") }
        let server = DashboardServer(feed: ScriptedFeed(), host: "0.0.0.0", port: 9000)
        #expect(server.exposureWarning?.contains("0.0.0.0, not loopback: anyone who can reach this port") == true)
        #expect(DashboardServer(feed: ScriptedFeed()).exposureWarning == nil)
        #expect(DashboardServer(feed: ScriptedFeed()).url.absoluteString == "http://127.0.0.1:8080/")
        #expect(DashboardServer(feed: ScriptedFeed(), host: "::1", port: 1).url.absoluteString == "http://[::1]:1/")
    }
}

/// Binding, with real sockets on loopback.
@Suite struct ServerBindTests {
    @Test func aPortInUseIsAClearError() async throws {
        let first = DashboardServer(feed: ScriptedFeed(), port: 0)
        let (urls, continuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await first.run { continuation.yield($0) } }
        defer { task.cancel() }
        var it = urls.makeAsyncIterator()
        let url = try #require(await it.next())
        #expect(first.boundURL == url)
        let port = try #require(url.port)
        let second = DashboardServer(feed: ScriptedFeed(), port: port)
        await #expect(throws: DashboardServerError.addressInUse(host: "127.0.0.1", port: port)) {
            try await second.run()
        }
        #expect(DashboardServerError.addressInUse(host: "127.0.0.1", port: port).description.contains("already in use"))
        task.cancel()
        _ = await task.result
    }
}
