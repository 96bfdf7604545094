import ArgumentParser
import Foundation
import MotionDashboard
import MotionMQTT
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

            Steps, distance and cadence (CMPedometer) are shown for any source with an accelerometer; \
            altitude (CMAltimeter) when there is a barometer: COREMOTION_BAROMETER (sim:stairs, sim:lift, \
            iio[:NAME]), an IIO pressure sensor, or the simulator's still barometer for sim: sources. With \
            --source mqtt://HOST:PORT/FILTER and a + or # filter, the page lists every device heard and \
            shows the one picked.
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
        let shown: any SensorSource = (source as? MQTTSensorSource).map(Self.devicePicker) ?? source
        let server = DashboardServer(source: shown, barometer: Self.barometer(for: source), host: host, port: port)
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

    /// The barometer behind the altitude stream: `CMAltimeter`'s default (`COREMOTION_BAROMETER`, the
    /// simulator's when `COREMOTION_SOURCE` is `sim:…`, else the first IIO pressure sensor), or the
    /// simulator's still barometer when the source is the simulator.
    static func barometer(for source: any SensorSource) -> (any BarometerSource)? {
        if let barometer = CMAltimeter().barometer { return barometer }
        return source.info.identifier.hasPrefix("sim:") ? SimulatedBarometerSource(scenario: .still) : nil
    }

    /// A device picker over a broker: every device heard is listed on the page, and the one picked is
    /// shown (the URL's `device=` first, if any, else the first heard).
    static func devicePicker(for broker: MQTTSensorSource) -> DashboardDevicePicker {
        let picker = DashboardDevicePicker(
            info: broker.info,
            start: { handler in
                broker.startDevices { event in
                    switch event {
                    case .sample(let s): handler(.sample(device: s.device, s.sample))
                    case .appeared(let id): handler(.appeared(id))
                    case .silent(let id): handler(.silent(id))
                    case .malformed, .broker, .subscribed: break
                    }
                }
            },
            stop: { Task { await broker.stopDevices() } })
        if let device = broker.boundDevice { picker.select(device) }
        return picker
    }
}
