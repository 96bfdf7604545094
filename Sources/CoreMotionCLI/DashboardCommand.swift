import ArgumentParser
import Foundation
import MotionDashboard
import MotionSources
import OpenCoreMotion

/// `coremotion dashboard`: MotionGraphs for Linux, a live web page of every sensor with the
/// update-interval slider, served by this binary.
public struct DashboardCommand: AsyncParsableCommand {
    /// The command's name, help and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Serve a live web dashboard of every sensor: graphs, attitude, the update-interval slider.",
        discussion: """
            Open the printed URL in a browser. Everything is served by this binary (no CDN), so it works \
            offline and over SSH port forwarding (ssh -L 8080:127.0.0.1:8080 HOST). It listens on \
            127.0.0.1 unless --host says otherwise: anyone who can reach the port can watch and control \
            the sensors. The WebSocket protocol is in Sources/MotionDashboard/PROTOCOL.md.
            """
    )

    @Option(help: "The motion source: sim, sim:SCENARIO or replay:PATH. Default: COREMOTION_SOURCE, else hardware.")
    var source: String?

    @Option(help: "The address to listen on. Anything but loopback exposes the sensors to the network.")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port to listen on (0 picks a free one).")
    var port: Int = 8080

    /// Creates the command with its defaults; ArgumentParser fills the options.
    public init() {}

    /// Refuses out-of-range options with one clear line.
    public func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535; got \(port)") }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
    }

    /// Runs the command until it is done (the dashboard: until interrupted).
    public func run() async throws {
        let manager: CMMotionManager
        if let source {
            do {
                manager = CMMotionManager(source: try CMMotionManager.source(named: source))
            } catch {
                Self.fail("\(error)")
            }
        } else {
            manager = CMMotionManager()
        }
        if manager.source == nil {
            FileHandle.standardError.write(Data("note: no motion source found; try --source sim\n".utf8))
        }
        let server = DashboardServer(manager: manager, host: host, port: port)
        if let warning = server.exposureWarning {
            FileHandle.standardError.write(Data((warning + "\n").utf8))
        }
        do {
            try await server.run { url in
                FileHandle.standardOutput.write(Data("dashboard: \(url.absoluteString)\n".utf8))
            }
        } catch let error as DashboardServerError {
            Self.fail(error.description)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(1)
    }
}
