import Foundation

/// Runs the built `coremotion` executable and captures what it prints.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
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

    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> CLIResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COREMOTION_SOURCE")
        env["COLUMNS"] = "100"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read while it runs so a full pipe never blocks it.
        let outData = Data.Accumulator(out.fileHandleForReading)
        let errData = Data.Accumulator(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return CLIResult(status: process.terminationStatus, stdout: outData.string(), stderr: errData.string())
    }
}

extension Data {
    /// Collects a pipe's output on a background thread.
    final class Accumulator: @unchecked Sendable {
        private var data = Data()
        private let lock = NSLock()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    lock.lock(); data.append(chunk); lock.unlock()
                }
                done.signal()
            }
        }

        func string() -> String {
            done.wait()
            lock.lock(); defer { lock.unlock() }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
