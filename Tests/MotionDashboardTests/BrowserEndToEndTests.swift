import Foundation
import MotionSources
import OpenCoreMotion
import Testing
@testable import MotionDashboard

/// The dashboard in a real browser: headless Chromium loads the page from a dashboard running on
/// the simulated device, the screenshot must show traces in every graph, and moving the slider must
/// change the rate the page receives. Needs Debian's `chromium` (CI installs it); fails without it.
@Suite(.serialized) struct BrowserEndToEndTests {
    /// Runs a dashboard on `source` on a free loopback port until `body` returns.
    private func withDashboard<T: Sendable>(
        source: any SensorSource, port: Int = 0, _ body: @Sendable (URL) async throws -> T
    ) async throws -> T {
        let server = DashboardServer(source: source, host: "127.0.0.1", port: port)
        let (urls, continuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await server.run { url in continuation.yield(url) } }
        defer { task.cancel() }
        var iterator = urls.makeAsyncIterator()
        guard let url = await iterator.next() else { throw Chromium.Failure(description: "dashboard did not start") }
        let value = try await body(url)
        task.cancel()
        _ = await task.result
        return value
    }

    struct Counts: Sendable {
        var time: Double
        var messages: Double
        var samples: Double
        var accelerometer: Double
        var frames: Double
        var intervalMs: Double?

        /// Per-second rates from `self` to `later`.
        func rates(to later: Counts) -> (messages: Double, samples: Double, accelerometer: Double, fps: Double) {
            let dt = (later.time - time) / 1000
            return ((later.messages - messages) / dt, (later.samples - samples) / dt,
                    (later.accelerometer - accelerometer) / dt, (later.frames - frames) / dt)
        }
    }

    private static func counts(_ page: CDPSession) async throws -> Counts {
        let v = try await page.evaluate(
            """
            ({ time: performance.now(), messages: dashboardStats.messages, samples: dashboardStats.samples,
               accelerometer: dashboardStats.perSensor.accelerometer, frames: window.dashboardFrames,
               intervalMs: dashboardStats.intervalMs })
            """) as? [String: Any] ?? [:]
        func d(_ k: String) -> Double { (v[k] as? NSNumber)?.doubleValue ?? .nan }
        return Counts(time: d("time"), messages: d("messages"), samples: d("samples"),
                      accelerometer: d("accelerometer"), frames: d("frames"), intervalMs: (v["intervalMs"] as? NSNumber)?.doubleValue)
    }

    /// Polls `condition` (a JS expression) until it is true, or fails after `seconds`.
    private static func wait(_ page: CDPSession, for condition: String, seconds: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let probe = "(() => { try { return Boolean(\(condition)); } catch (e) { return false; } })()"
            if try await page.evaluate(probe) as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Chromium.Failure(description: "timed out after \(seconds) s waiting for: \(condition)")
    }

    /// Moves the interval slider by clicking on its track: fraction 0 is 10 ms, 1 is 100 ms.
    private static func clickSlider(_ page: CDPSession, at fraction: Double) async throws {
        let r = try await page.evaluate(
            "(() => { const r = document.getElementById('interval').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
            as? [Double] ?? []
        #expect(r.count == 4)
        guard r.count == 4 else { return }
        // Keep off the very ends, where the thumb's half-width is.
        let x = r[0] + 8 + (r[2] - 16) * fraction
        try await page.click(x: x, y: r[1] + r[3] / 2)
    }

    /// Measures for `seconds` and returns rates.
    private static func measure(_ page: CDPSession, seconds: Double) async throws
        -> (messages: Double, samples: Double, accelerometer: Double, fps: Double)
    {
        let a = try await counts(page)
        try await Task.sleep(for: .seconds(seconds))
        let b = try await counts(page)
        return a.rates(to: b)
    }

    // Up to 30 minutes: the browser waits its turn behind the VMs and soaks (Exclusive).
    @Test(.timeLimit(.minutes(30)))
    func thePageShowsLiveGraphsAndTheSliderChangesTheRate() async throws {
        let source = try CMMotionManager.source(named: "sim:handheld")
        let screenshotPath = ProcessInfo.processInfo.environment["DASHBOARD_E2E_SCREENSHOT"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("coremotion-dashboard-e2e.png").path
        try await withDashboard(source: source) { url in
            try await Chromium.withPage(url: url.absoluteString) { page in
                try await Self.wait(page, for: "window.dashboardStats && dashboardStats.samples > 100")

                // Fastest: 10 ms, 100 Hz for each of the four streams.
                try await Self.clickSlider(page, at: 0)
                try await Self.wait(page, for: "dashboardStats.intervalMs === 10", seconds: 5)
                try await Task.sleep(for: .milliseconds(600))
                let fast = try await Self.measure(page, seconds: 4)   // 4 s: a backlog flushed after a stall under load weighs less

                // Slowest: 100 ms, 10 Hz each.
                try await Self.clickSlider(page, at: 1)
                try await Self.wait(page, for: "dashboardStats.intervalMs === 100", seconds: 5)
                try await Task.sleep(for: .milliseconds(600))
                let slow = try await Self.measure(page, seconds: 4)
                print(
                    "dashboard e2e: 10 ms → \(Int(fast.messages)) messages/s, \(Int(fast.samples)) samples/s "
                        + "(accelerometer \(Int(fast.accelerometer))/s), page \(Int(fast.fps)) fps; "
                        + "100 ms → \(Int(slow.messages)) messages/s, \(Int(slow.samples)) samples/s "
                        + "(accelerometer \(Int(slow.accelerometer))/s), page \(Int(slow.fps)) fps")

                #expect(fast.accelerometer > 70 && fast.accelerometer < 130, "about 100 Hz at 10 ms")
                #expect(slow.accelerometer > 6 && slow.accelerometer < 14, "about 10 Hz at 100 ms")
                #expect(fast.samples > 4 * slow.samples, "the slider changes the delivered rate")
                #expect(fast.messages > 1.5 * slow.messages, "fewer frames carry samples at 100 ms")
                #expect(fast.fps > 15 && slow.fps > 15, "the page keeps rendering (its frame counter moves); 60 on an idle machine")

                // Stop and start a sensor with its button, as a user would.
                let button = try await page.evaluate(
                    "(() => { const r = document.querySelector('#panel-gyro [data-toggle]').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")
                    as? [Double] ?? []
                try #require(button.count == 2)
                try await page.click(x: button[0], y: button[1])
                try await Self.wait(page, for: "dashboardState.sensors.gyro.running === false", seconds: 5)
                try await Task.sleep(for: .milliseconds(300))
                let stopped = try await page.evaluate("dashboardStats.perSensor.gyro") as? Int ?? -1
                try await Task.sleep(for: .milliseconds(700))
                #expect(try await page.evaluate("dashboardStats.perSensor.gyro") as? Int == stopped, "no gyro samples once stopped")
                #expect(try await page.evaluate("document.querySelector('#panel-gyro [data-toggle]').textContent") as? String == "Start")
                try await page.click(x: button[0], y: button[1])
                try await Self.wait(page, for: "dashboardState.sensors.gyro.running === true && dashboardStats.perSensor.gyro > \(stopped + 20)", seconds: 5)

                // The accelerometer's low-pass filter, from its menu.
                try await page.evaluate(
                    "(() => { const s = document.getElementById('filter-mode'); s.value = 'lowPass'; s.dispatchEvent(new Event('change')); })()")
                try await Self.wait(page, for: "dashboardState.filter.mode === 'lowPass' && dashboardState.filter.factor === 0.1", seconds: 5)

                // Back to a busy rate for the picture, then check the screenshot's pixels.
                try await Self.clickSlider(page, at: 0.1)
                try await Task.sleep(for: .seconds(1.5))
                let shot = try await page.send("Page.captureScreenshot", ["format": "png"])
                let base64 = try #require(shot["data"] as? String)
                let png = try #require(Data(base64Encoded: base64))
                try png.write(to: URL(fileURLWithPath: screenshotPath))
                print("dashboard e2e: screenshot \(screenshotPath) (\(png.count) bytes)")
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))

                // Decode the screenshot itself (the browser is the PNG decoder) and count, inside each
                // graph's plot area, the pixels in the trace colours (red x, green y, blue z).
                let counts = try await page.evaluate(
                    """
                    (async () => {
                      const img = new Image();
                      img.src = "data:image/png;base64,\(base64)";
                      await img.decode();
                      const c = document.createElement("canvas");
                      c.width = img.width; c.height = img.height;
                      const ctx = c.getContext("2d");
                      ctx.drawImage(img, 0, 0);
                      const scale = img.width / window.innerWidth;
                      const out = {};
                      for (const g of document.querySelectorAll("canvas[data-graph]")) {
                        const sensor = g.closest("[data-sensor]").dataset.sensor;
                        const r = g.getBoundingClientRect();
                        // the plot area only: right of the y labels, below the legend, above the time axis
                        const x0 = Math.round((r.left + 54) * scale), y0 = Math.round((r.top + 22) * scale);
                        const w = Math.round((r.width - 62) * scale), h = Math.round((r.height - 46) * scale);
                        const d = ctx.getImageData(x0, y0, w, h).data;
                        let red = 0, green = 0, blue = 0;
                        for (let i = 0; i < d.length; i += 4) {
                          const R = d[i], G = d[i + 1], B = d[i + 2];
                          if (R > 180 && G < 130 && B < 130) red++;
                          else if (G > 160 && R < 130 && B < 150) green++;
                          else if (B > 180 && R < 130 && G < 200) blue++;
                        }
                        out[sensor] = [red, green, blue];
                      }
                      return out;
                    })()
                    """) as? [String: [Int]] ?? [:]
                print("dashboard e2e: trace pixels [red, green, blue] per graph: \(counts)")
                for sensor in DashboardSensor.allCases where DashboardSensor.motion.contains(sensor) {
                    let c = counts[sensor.rawValue] ?? []
                    #expect(c.count == 3, "\(sensor) graph found")
                    #expect(c.reduce(0, +) > 300, "\(sensor) graph shows traces: \(c)")
                    #expect(c.filter { $0 > 20 }.count >= 2, "\(sensor) graph shows several axes: \(c)")
                }
            }
        }
    }

    /// Starts a dashboard in a task and returns the task and its URL.
    private static func start(source: any SensorSource, port: Int) async throws -> (Task<Void, any Error>, URL) {
        let server = DashboardServer(source: source, host: "127.0.0.1", port: port)
        let (urls, continuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await server.run { url in continuation.yield(url) } }
        var iterator = urls.makeAsyncIterator()
        guard let url = await iterator.next() else { throw Chromium.Failure(description: "dashboard did not start") }
        return (task, url)
    }

    /// The pedometer and altitude panels on a walk up and down the simulated stairs, in real time.
    // Up to 30 minutes: the browser waits its turn behind the VMs and soaks (Exclusive).
    @Test(.timeLimit(.minutes(30)))
    func thePageCountsStepsAndShowsAltitude() async throws {
        let source = try CMMotionManager.source(named: "sim:walk")
        let server = DashboardServer(source: source, barometer: SimulatedBarometerSource(scenario: .stairs), port: 0)
        let (urls, continuation) = AsyncStream.makeStream(of: URL.self)
        let task = Task { try await server.run { url in continuation.yield(url) } }
        defer { task.cancel() }
        var iterator = urls.makeAsyncIterator()
        let url = try #require(await iterator.next())
        try await Chromium.withPage(url: url.absoluteString) { page in
            try await Self.wait(page, for: "Number(document.getElementById('ped-steps').textContent) >= 8", seconds: 30)
            try await Self.wait(page, for: "dashboardStats.perSensor.altitude >= 2", seconds: 10)
            let shown = try await page.evaluate(
                """
                ({ pedometerHidden: document.getElementById('panel-pedometer').hidden,
                   altitudeHidden: document.getElementById('panel-altitude').hidden,
                   steps: Number(document.getElementById('ped-steps').textContent),
                   cadence: Number(document.getElementById('ped-cadence').textContent),
                   pressure: Number(document.getElementById('alt-pressure').textContent),
                   lastSteps: window.dashboardLast.pedometer[1],
                   picker: document.getElementById('device-picker').hidden })
                """) as? [String: Any] ?? [:]
            print("dashboard e2e: steps and altitude panels: \(shown)")
            #expect(shown["pedometerHidden"] as? Bool == false && shown["altitudeHidden"] as? Bool == false)
            #expect((shown["steps"] as? NSNumber)?.intValue == (shown["lastSteps"] as? NSNumber)?.intValue, "the panel shows the last row")
            let cadence = (shown["cadence"] as? NSNumber)?.doubleValue ?? 0
            #expect(cadence > 1.6 && cadence < 2.2, "the walk's 1.8–2.0 steps/s: \(cadence)")
            let pressure = (shown["pressure"] as? NSNumber)?.doubleValue ?? 0
            #expect(pressure > 95 && pressure < 105, "kPa: \(pressure)")
            #expect(shown["picker"] as? Bool == true, "no device picker for a one-device source")
        }
        task.cancel()
        _ = await task.result
    }

    // Up to 30 minutes: the browser waits its turn behind the VMs and soaks (Exclusive).
    @Test(.timeLimit(.minutes(30)))
    func thePageReconnectsWhenTheServerComesBack() async throws {
        let source = try CMMotionManager.source(named: "sim:still")
        let (first, url) = try await Self.start(source: source, port: 0)
        defer { first.cancel() }
        try await Chromium.withPage(url: url.absoluteString) { page in
            try await Self.wait(page, for: "dashboardStats.connects === 1 && dashboardStats.samples > 10")
            // The still device lies flat, face up: the header shows it as UIDevice decides it. (The
            // handheld one is tilted ~30–40° toward the user, between face up and portrait, so UIDevice's
            // answer there depends on when tracking began.)
            try await Self.wait(page, for: "document.getElementById('orientation').textContent === 'faceUp'", seconds: 10)
            first.cancel()
            _ = await first.result
            try await Self.wait(page, for: "document.getElementById('connection').textContent.startsWith('disconnected')", seconds: 10)
            let (second, _) = try await Self.start(source: source, port: url.port!)
            defer { second.cancel() }
            let before = try await page.evaluate("dashboardStats.samples") as? Int ?? 0
            try await Self.wait(page, for: "dashboardStats.connects === 2 && dashboardStats.samples > \(before + 10)", seconds: 15)
            #expect(try await page.evaluate("document.getElementById('connection').textContent") as? String == "live")
            second.cancel()
            _ = await second.result
        }
    }
}
