import ArgumentParser
import Foundation
import OpenCoreMotion

/// `--source SRC`, shared by the commands that read motion.
struct SourceOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where motion comes from: sim, sim:SCENARIO (still, handheld, rotate, walk, shake), replay:PATH, iio, iio:NAME, evdev, evdev:/dev/input/eventN, i2c, i2c:/dev/i2c-N[:0xAA] (an MPU-6050/6500/9250, LSM6DSx, LSM9DS1 or BMI160 driven from user space), mqtt://[USER:PASS@]HOST:PORT/TOPIC_FILTER[?device=ID] (an MQTT broker), or a phone: sensorlogger://HOST:PORT, sensorserver://HOST:PORT, sensorlog://HOST:PORT, hyperimu://HOST:PORT.",
            discussion: "Without it: COREMOTION_SOURCE when set, otherwise the first motion hardware found.",
            valueName: "src"
        )
    )
    var source: String?

    @OptionGroup var roots: LinuxRootOptions

    /// The spec in force: `--source`, else `COREMOTION_SOURCE`, else `defaultSpec`.
    func spec(default defaultSpec: String? = nil) -> String? {
        source ?? ProcessInfo.processInfo.environment["COREMOTION_SOURCE"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultSpec
    }

    /// The source named (`--source`, `COREMOTION_SOURCE`, `defaultSpec`), else the first motion
    /// hardware under the roots; throws a one-line ``CLIError`` when there is none.
    func resolve(defaultSpec: String? = nil) throws -> any SensorSource {
        do {
            if let spec = spec(default: defaultSpec) {
                return try CMMotionManager.linuxSource(named: spec, sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot)
            }
        } catch {
            throw CLIError(String(describing: error))
        }
        if let first = CMMotionManager.firstLinuxSource(sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot) {
            return first
        }
        throw CLIError("no motion sensor found under \(roots.sysfsRoot) or \(roots.devRoot): pass --source (for example --source sim:handheld) or set COREMOTION_SOURCE")
    }
}

/// An error the CLI reports as one line on stderr with exit status 1.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Writes lines to a file or standard output, flushing at most every `flushInterval` seconds so a
/// live pipe sees data promptly without a write per line.
final class LineWriter: Sendable {
    /// `nil` for standard output, written through ``StandardOutput``.
    private let handle: FileHandle?
    private let flushInterval: Double
    private struct Buffer {
        var text = ""
        var lastFlush: Double
    }
    private let buffer: Locked<Buffer>

    init(path: String?, flushInterval: Double = 0.1) throws {
        self.flushInterval = flushInterval
        buffer = Locked(Buffer(lastFlush: ProcessInfo.processInfo.systemUptime))
        if let path, path != "-" {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                  let h = FileHandle(forWritingAtPath: path)
            else { throw CLIError("\(path): cannot be written") }
            handle = h
        } else {
            handle = nil
        }
    }

    func write(_ line: String) {
        buffer.withLock { b in
            b.text += line
            b.text += "\n"
            let now = ProcessInfo.processInfo.systemUptime
            if b.text.utf8.count > 1 << 16 || now - b.lastFlush >= flushInterval {
                flush(&b)
                b.lastFlush = now
            }
        }
    }

    func flush() {
        buffer.withLock { flush(&$0) }
    }

    private func flush(_ b: inout Buffer) {
        guard !b.text.isEmpty else { return }
        if let handle { handle.write(Data(b.text.utf8)) } else { StandardOutput.write(b.text) }
        b.text.removeAll(keepingCapacity: true)
    }
}

/// Prints one line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
