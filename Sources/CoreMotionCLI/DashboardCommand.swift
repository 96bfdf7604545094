import ArgumentParser
import Foundation
import MotionDashboard
import MotionSources
import OpenCoreMotion

/// `coremotion dashboard`: MotionGraphs for Linux, a live web page of every sensor with the
/// update-interval slider, served by this binary.
package struct DashboardCommand: AsyncParsableCommand {
    /// The command's name, help and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Serve a live web dashboard of every sensor: graphs, attitude, the update-interval slider.",
        discussion: """
            Open the printed URL in a browser. Everything is served by this binary (no CDN), so it works \
            offline and over SSH port forwarding (ssh -L 8080:127.0.0.1:8080 HOST). It listens on \
            127.0.0.1 unless --host says otherwise: anyone who can reach the port can watch and control \
            the sensors. The WebSocket protocol is in Sources/MotionDashboard/PROTOCOL.md.
            """
    )

    @OptionGroup var sourceOptions: SourceOptions

    @Option(help: "The address to listen on. Anything but loopback exposes the sensors to the network.")
    var host: String = "127.0.0.1"

    @Option(parsing: .unconditional, help: "The TCP port to listen on (0 picks a free one).", transform: OptionValue.port)
    var port: Int = 8080

    /// Creates the command with its defaults; ArgumentParser fills the options.
    package init() {}

    /// Refuses out-of-range options with one clear line.
    package func validate() throws {
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
    }

    /// Runs the command until it is done (the dashboard: until interrupted).
    package func run() async throws {
        let source = try sourceOptions.resolve()
        let server = DashboardServer(source: source, host: host, port: port)
        if let warning = server.exposureWarning {
            printError(warning)
        }
        do {
            try await server.run { url in
                FileHandle.standardOutput.write(Data("dashboard: \(url.absoluteString) (\(source.info.name); Ctrl-C stops)\n".utf8))
            }
        } catch let error as DashboardServerError {
            throw CLIError(error.description)
        }
    }
}
