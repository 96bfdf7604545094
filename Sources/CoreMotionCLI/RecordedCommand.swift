import ArgumentParser
import Foundation
import MotionRecorderStore

/// `--from` / `--to`: an ISO 8601 date, or seconds relative to now (`-3600`).
struct DateArgument: ExpressibleByArgument {
    var date: Date

    init?(argument: String) {
        if let seconds = Double(argument) {
            // Relative seconds: at most about 3 years either way (OptionValue.maximumSeconds).
            guard seconds.isFinite, abs(seconds) <= OptionValue.maximumSeconds else { return nil }
            date = Date().addingTimeInterval(seconds)
        } else if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(argument) {
            date = d
        } else if let d = try? Date.ISO8601FormatStyle().parse(argument) {
            date = d
        } else {
            return nil
        }
    }

    /// ``init(argument:)`` with the reason when it fails (the `transform:` of `--from` and `--to`).
    static func parse(_ text: String) throws -> DateArgument {
        guard let d = DateArgument(argument: text) else {
            throw OptionValue.Refusal("an ISO 8601 date such as 2026-11-23T10:00:00Z, or finite seconds from now within ±\(OptionValue.format(OptionValue.maximumSeconds))")
        }
        return d
    }
}

/// `--database`, shared by `record` and `recorded`: the recorder's SQLite file.
struct RecorderDatabaseOption: ParsableArguments {
    @Option(name: .customLong("database"), help: ArgumentHelp("The SQLite database (default: COREMOTION_RECORDER_DATABASE, else $XDG_DATA_HOME/coremotion/recordings.sqlite).", valueName: "path"))
    var explicitPath: String?

    /// The file to use: `--database`, else ``RecordingStore/defaultPath(environment:)``.
    var path: String { explicitPath ?? RecordingStore.defaultPath() }
}

/// `coremotion recorded`: prints what `coremotion record` or `CMSensorRecorder` stored.
struct RecordedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recorded",
        abstract: "Print the recorded accelerometer samples, oldest first.",
        discussion: """
            CSV columns: identifier (the batch), start_date (ISO 8601, UTC, milliseconds), timestamp (seconds \
            since boot), x, y, z (g). Dates are ISO 8601 (2026-11-23T10:00:00Z) or seconds relative to now (--from -3600).
            """
    )

    @Option(parsing: .unconditional, help: ArgumentHelp("The first date, ISO 8601 or seconds relative to now such as -3600 (default: 3 days ago).", valueName: "date"), transform: DateArgument.parse)
    var from: DateArgument?

    @Option(parsing: .unconditional, help: ArgumentHelp("The last date, ISO 8601 or seconds relative to now (default: now).", valueName: "date"), transform: DateArgument.parse)
    var to: DateArgument?

    @OptionGroup var database: RecorderDatabaseOption

    @Option(help: "Line format: csv or jsonl.")
    var format: SampleFormat = .csv

    @Option(name: .customLong("source"), help: ArgumentHelp("Only the samples recorded from this source (as --sessions lists them, e.g. sim:walk or iio:iio:device0).", valueName: "src"))
    var recordedSource: String?

    @Flag(help: "List the recordings (sessions) instead: id, source, requested start and end, samples.")
    var sessions = false

    func run() async throws {
        let path = database.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("\(path): no recordings database (record with `coremotion record` first)")
        }
        let end = to?.date ?? Date()
        let start = from?.date ?? end.addingTimeInterval(-RecordingStore.retention)
        let samples: [StoredAccelerometerSample]
        do {
            // Read-only: works on a database in a read-only place, and never races a recorder.
            let store = try RecordingStore(readingFrom: path)
            if sessions {
                let writer = try LineWriter(path: nil)
                writer.write("session,source,requested_start,requested_end,samples")
                for (session, count) in try store.sessionsWithSampleCounts() {
                    writer.write("\(session.id),\(session.source),\(RecordedFormat.date(session.requestedStart)),\(RecordedFormat.date(session.requestedEnd)),\(count)")
                }
                writer.flush()
                return
            }
            samples = try store.samples(from: start, to: end, source: recordedSource)
        } catch let error as RecorderError {
            throw CLIError(error.description)
        }
        let writer = try LineWriter(path: nil)
        if format == .csv { writer.write(RecordedFormat.csvHeader) }
        for s in samples { writer.write(RecordedFormat.line(s, format)) }
        writer.flush()
    }
}

/// The lines of `coremotion recorded`.
enum RecordedFormat {
    static let csvHeader = "identifier,start_date,timestamp,x,y,z"

    /// ISO 8601 in UTC, rounded to the nearest millisecond: `2026-11-23T10:00:00.020Z`.
    static func date(_ d: Date) -> String {
        let milliseconds = (d.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let fraction = Int(milliseconds - seconds * 1000)  // safe: 0…999, the milliseconds of a whole second
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let digits = String(fraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    static func line(_ s: StoredAccelerometerSample, _ format: SampleFormat) -> String {
        let r = s.reading
        switch format {
        case .csv:
            return "\(s.identifier),\(date(r.date)),\(r.timestamp),\(r.x),\(r.y),\(r.z)"
        case .jsonl:
            return "{\"identifier\":\(s.identifier),\"start_date\":\"\(date(r.date))\",\"timestamp\":\(r.timestamp),\"x\":\(r.x),\"y\":\(r.y),\"z\":\(r.z)}"
        }
    }
}
