import Foundation
import MotionTestSupport

/// Runs the built `coremotion` executable and captures what it prints.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
    /// Whether the runner killed it at its timeout.
    var timedOut = false
}

enum CLI {
    /// The `coremotion` binary next to the test bundle in the build folder.
    static var executable: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("coremotion")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        // swift-testing's runner lives in the build folder itself.
        let args = CommandLine.arguments[0]
        return URL(fileURLWithPath: args).deletingLastPathComponent().appendingPathComponent("coremotion")
    }

    /// Runs `coremotion` with `arguments` and waits for it without holding a test thread; `limited`
    /// as in `ChildProcess.run` (false only where processes must run side by side).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60,
                    limited: Bool = true) async throws -> CLIResult {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COREMOTION_SOURCE")
        env["COLUMNS"] = "100"
        // Calibration, stored and learned, goes to a directory of this run's own unless the test names
        // one: a run never reads what another run (or the user's own devices) left behind.
        var calibrationDirectory: URL?
        if environment["COREMOTION_CALIBRATION_DIR"] == nil {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cm-cli-calibration-\(UUID().uuidString)")
            calibrationDirectory = dir
            env["COREMOTION_CALIBRATION_DIR"] = dir.path
        }
        defer { if let calibrationDirectory { try? FileManager.default.removeItem(at: calibrationDirectory) } }
        for (k, v) in environment { env[k] = v }
        let r = try await ChildProcess.run(executable, arguments, environment: env, timeout: timeout, limited: limited)
        return CLIResult(status: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.timedOut)
    }
}
