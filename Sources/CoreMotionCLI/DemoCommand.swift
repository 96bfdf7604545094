import ArgumentParser
import Foundation
import MotionDashboard
import OpenCoreMotion

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Show live device motion from a simulated handheld device (no hardware needed).",
        discussion: "Device motion is in xMagneticNorthZVertical when the source has a magnetometer, else xArbitraryZVertical, unless --reference-frame says otherwise. Roll, pitch and yaw in degrees, gravity and user acceleration in g, rotation rate in rad/s. The live web dashboard is served too (its URL is printed). Ctrl-C stops."
    )

    @OptionGroup var sourceOptions: SourceOptions

    @OptionGroup var durationOption: DurationOption
    var duration: Double? { durationOption.duration }

    /// `--reference-frame` (default xMagneticNorthZVertical when the source has a magnetometer, else
    /// xArbitraryZVertical) and `--location`.
    @OptionGroup var frameOptions: ReferenceFrameOptions

    @Option(parsing: .unconditional, help: "Seconds between screen refreshes (0.02…3600).", transform: OptionValue.seconds(0.02...3600))
    var refresh: Double = 0.1

    @Option(parsing: .unconditional, help: "Port of the web dashboard on 127.0.0.1 (0 picks a free one).", transform: OptionValue.port)
    var port: Int = 8080

    @Flag(help: "Do not serve the web dashboard.")
    var noDashboard = false

    func validate() throws {
        _ = try frameOptions.coreMotionFrame()
    }

    func run() async throws {
        let source = try sourceOptions.resolve(defaultSpec: "sim:handheld")
        let manager = CMMotionManager(source: source)
        guard manager.isDeviceMotionAvailable else {
            throw CLIError("\(source.info.identifier) has no accelerometer and gyroscope: device motion is not available")
        }
        manager.location = frameOptions.location?.location
        let frame = try frameOptions.coreMotionFrame()
            ?? (manager.availableReferenceFrames.contains(.xMagneticNorthZVertical) ? .xMagneticNorthZVertical : .xArbitraryZVertical)
        manager.deviceMotionUpdateInterval = 0.01
        manager.startDeviceMotionUpdates(using: frame)
        defer { manager.stopDeviceMotionUpdates() }

        // The dashboard runs beside the terminal view; if it cannot start (port in use) the demo
        // goes on without it and says why.
        let dashboard: Task<Void, Never>? = noDashboard ? nil : Task { [port] in
            let server = DashboardServer(source: source, host: "127.0.0.1", port: port)
            do {
                try await server.run { url in
                    StandardOutput.write("Dashboard: \(url.absoluteString)\n")
                }
            } catch is CancellationError {
            } catch {
                printError("dashboard not started: \(error)")
            }
        }
        defer { dashboard?.cancel() }

        let tty = isatty(STDOUT_FILENO) != 0
        let started = ProcessInfo.processInfo.systemUptime
        var drawn = 0
        var lastPrinted = -Double.infinity
        let banner = "OpenCoreMotion demo: \(source.info.name) (\(source.info.identifier)), \(Self.name(of: frame))\n"
        StandardOutput.write(banner + (tty ? "Ctrl-C to stop." : "") + "\n")
        while true {
            let now = ProcessInfo.processInfo.systemUptime
            if let duration, now - started >= duration { break }
            if let motion = manager.deviceMotion, tty || now - lastPrinted >= 1 {
                let text = Self.render(motion)
                // Written unbuffered, so that a pipe (`coremotion demo | tee log`) sees each sample as it comes.
                if tty {
                    let up = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
                    StandardOutput.write(up + text.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\n")
                    drawn = text.count
                } else {
                    StandardOutput.write(text.joined(separator: "\n") + "\n\n")
                }
                lastPrinted = now
            }
            try await Task.sleep(nanoseconds: UInt64(refresh * 1e9))  // safe: --refresh is validated
        }
    }

    /// The frame's name in dashed lower case (`x-magnetic-north-z-vertical`), as the banner shows it.
    static func name(of frame: CMAttitudeReferenceFrame) -> String {
        ReferenceFrameArgument.dashedName(of: frame) ?? "frame \(frame.rawValue)"
    }

    /// The screen for one sample, one string per line.
    static func render(_ m: CMDeviceMotion) -> [String] {
        func f(_ x: Double, _ width: Int = 7, _ digits: Int = 3) -> String {
            String(format: "%\(width).\(digits)f", x)
        }
        let deg = 180 / Double.pi
        let a = m.attitude
        let heading = m.heading < 0 ? "   (none in an arbitrary frame)" : f(m.heading, 7, 1) + "°"
        return [
            "  attitude       roll \(f(a.roll * deg, 7, 1))°   pitch \(f(a.pitch * deg, 7, 1))°   yaw \(f(a.yaw * deg, 7, 1))°",
            "  gravity        x \(f(m.gravity.x))  y \(f(m.gravity.y))  z \(f(m.gravity.z))  g",
            "  user accel.    x \(f(m.userAcceleration.x))  y \(f(m.userAcceleration.y))  z \(f(m.userAcceleration.z))  g",
            "  rotation rate  x \(f(m.rotationRate.x))  y \(f(m.rotationRate.y))  z \(f(m.rotationRate.z))  rad/s",
            "  heading     \(heading)",
            "  timestamp      \(String(format: "%.3f", m.timestamp)) s since boot",
        ]
    }
}
