import ArgumentParser
import Foundation
import OpenCoreMotion

/// The exit statuses of every `coremotion` command (the README's table):
///
/// | status | meaning |
/// |---|---|
/// | 0 | success, including `--help` and `--version` |
/// | 1 | any error: a bad or missing option value, a source that cannot be opened, an unreadable file, a failed benchmark target |
///
/// An error is one line on standard error, `Error: ` then the reason.
package enum ExitStatus {
    /// Success.
    package static let success: Int32 = 0
    /// Every error.
    package static let failure: Int32 = 1
}

extension CoreMotionCommand {
    /// Parses `arguments` (without the program name), runs the command and returns its exit status
    /// from the table of ``ExitStatus``, having written any error as one line on standard error
    /// and help or the version on standard output.
    ///
    /// ArgumentParser's own `main()` would exit 64 for a bad option value and print usage lines
    /// after the error; this maps every failure to 1 and prints only the reason.
    package static func run(arguments: [String]) async -> Int32 {
        // Whatever the command, the process exits only once each source it stopped is stopped: an exit
        // while a source is being reconfigured can leave an I2C chip between its power-up commands (the
        // VM saw a BMI160's CMD at 0x11, not 0x15), and what fusion learned may not be saved yet.
        defer { CMMotionManager.waitUntilEverySourceSettles() }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitStatus.success
        } catch {
            return report(error)
        }
    }

    /// Writes what `error` says and returns its exit status (0 for help and the version, else 1).
    static func report(_ error: any Error) -> Int32 {
        let code = exitCode(for: error)
        if code == .success {
            let text = fullMessage(for: error)
            if !text.isEmpty { print(text) }
            return ExitStatus.success
        }
        // ExitCode(n) thrown by a command has said what it had to say already.
        let line = message(for: error)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
        if !line.isEmpty {
            FileHandle.standardError.write(Data(("Error: " + line + "\n").utf8))
        }
        return ExitStatus.failure
    }
}
