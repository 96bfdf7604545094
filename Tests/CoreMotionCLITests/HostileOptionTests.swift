import ArgumentParser
import CoreMotionCLI
import Foundation
import MotionTestSupport
import Testing

/// Every numeric option of every command, found from the command tree itself (ArgumentParser's
/// `--experimental-dump-help`), fed huge, negative, NaN and infinite values through the real
/// executable: exit status 1, one line on stderr, no crash, no hang. Commands added later are
/// covered without editing this file.
@Suite struct HostileOptionTests {
    /// One option of one command.
    struct Option: CustomStringConvertible, Sendable {
        var command: [String]
        var name: String
        /// What the command needs besides the option under test (required options and positionals).
        var required: [String]
        var description: String { (command + [name]).joined(separator: " ") }
    }

    static let hostileValues = ["1e308", "-1e308", "1e400", "99999999999999999999", "-1", "nan", "NaN", "inf", "-inf", "infinity",
                                "1e-320", "5e-324"]

    /// Every option that takes a value, with what its command requires, from the dump of the tree.
    static func valueOptions() async throws -> [Option] {
        let dump = try await CLI.run(["--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var out: [Option] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            let arguments = command["arguments"] as? [[String: Any]] ?? []
            var required: [String] = []
            for a in arguments where (a["isOptional"] as? Bool) == false {
                let values = a["allValues"] as? [String]
                let value = values?.first ?? "/nonexistent/hostile-input"
                if a["kind"] as? String == "positional" {
                    required.append(value)
                } else if let n = Self.longName(a) {
                    required += [n, value]
                }
            }
            for a in arguments where a["kind"] as? String == "option" && (a["allValues"] as? [String]) == nil {
                if let n = Self.longName(a) { out.append(Option(command: path, name: n, required: required)) }
            }
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                if let name = sub["commandName"] as? String { walk(sub, path + [name]) }
            }
        }
        walk(try #require(root["command"] as? [String: Any]), [])
        return out
    }

    static func longName(_ argument: [String: Any]) -> String? {
        let names = (argument["names"] as? [[String: Any]] ?? []) + [argument["preferredName"] as? [String: Any] ?? [:]]
        if let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String { return "--" + long }
        return nil
    }

    /// The value-conversion error ArgumentParser reports for `value` of `option`, if any.
    static func conversionError(_ option: Option, _ value: String) -> String? {
        do {
            _ = try CoreMotionCommand.parseAsRoot(option.command + option.required + [option.name, value])
            return nil
        } catch {
            let m = CoreMotionCommand.message(for: error)
            return m.contains("The value '\(value)' is invalid for") ? m : nil
        }
    }

    /// Numeric options: text is refused at conversion and some plain number is not.
    static func numericOptions() async throws -> [Option] {
        try await valueOptions().filter { o in
            conversionError(o, "abc") != nil && ["1", "10", "0.5", "100", "1000"].contains { conversionError(o, $0) == nil }
        }
    }

    @Test func theWalkFindsTheKnownNumericOptions() async throws {
        let found = Set(try await Self.numericOptions().map(\.description))
        // A sample of the options of today's commands, to show the walk and its classification work;
        // the checks below run on whatever the walk finds.
        for known in ["demo --duration", "demo --refresh", "demo --port", "orientation --timeout", "orientation --count",
                      "bench delivery --seconds", "bench delivery --rate", "stream --interval", "record --duration",
                      "bench fusion --samples", "dashboard --port", "recorded --from"] {
            #expect(found.contains(known), "\(known) not found among \(found.sorted())")
        }
        #expect(!found.contains("stream --output"), "a path is not numeric")
        #expect(!found.contains("stream --sensor"), "an enumeration is not numeric")
    }

    @Test func everyNumericOptionRefusesHostileValuesWithStatusOneAndOneLine() async throws {
        let options = try await Self.numericOptions()
        #expect(options.count >= 15)
        let cases = options.flatMap { o in Self.hostileValues.map { (o, $0) } }
        let database = NSTemporaryDirectory() + "cm-hostile-\(UUID().uuidString).sqlite"
        defer { try? FileManager.default.removeItem(atPath: database) }
        let results = LockedBox([String]())
        await concurrently(cases.count) { i in
            let (o, value) = cases[i]
            let args = o.command + o.required + [o.name, value]
            guard let r = try? await CLI.run(args, environment: ["COREMOTION_SOURCE": "sim:still", "COREMOTION_RECORDER_DATABASE": database,
                                                           "COREMOTION_SYSFS_ROOT": "/nonexistent"], timeout: 20)
            else { results.withLock { $0.append("\(args): could not run") }; return }
            var problems: [String] = []
            if r.timedOut { problems.append("hung (killed after 20 s)") }
            let lines = r.stderr.split(separator: "\n")
            // A negative or a tiny number is a legitimate value of a few options (a date relative to
            // now); accepted, the command must still end cleanly.
            let mayAccept = ["-1", "1e-320", "5e-324"].contains(value)
            if r.status == 0 && mayAccept {
            } else if r.status != 1 {
                problems.append("exit status \(r.status)")
            } else if lines.count != 1 || !lines[0].hasPrefix("Error: ") {
                problems.append("stderr is not one 'Error: ' line: \(r.stderr.debugDescription)")
            } else if value.hasPrefix("-"), r.stderr.contains("Missing value") {
                problems.append("a negative value read as a missing one (declare the option with parsing: .unconditional)")
            }
            if !problems.isEmpty { results.withLock { $0.append("\(args.joined(separator: " ")): \(problems.joined(separator: ", "))") } }
        }
        let failures = results.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) of \(cases.count):\n\(failures.joined(separator: "\n"))")
    }

    @Test func helpExitsZeroAndErrorsExitOneForEveryCommand() async throws {
        let commands = Set(try await Self.valueOptions().map(\.command)).sorted { $0.joined() < $1.joined() }
        #expect(commands.count >= 8)
        for c in commands {
            let help = try await CLI.run(c + ["--help"])
            #expect(help.status == 0, "\(c) --help")
            #expect(help.stdout.contains("USAGE"), "\(c) --help")
            let bad = try await CLI.run(c + ["--no-such-option"])
            #expect(bad.status == 1, "\(c) --no-such-option: \(bad.status)")
            #expect(bad.stderr.split(separator: "\n").count == 1, "\(c): \(bad.stderr)")
        }
    }

    @Test func orientationReportsLikeEveryOtherCommand() async throws {
        let r = try await CLI.run(["orientation", "--sysfs-root", "/nonexistent", "--dev-root", "/nonexistent", "--once"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("Error: no motion sensor found under /nonexistent"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test func aNegativeValueIsReadAsAValueNotAsAMissingOne() async throws {
        let r = try await CLI.run(["stream", "--source", "sim:still", "--sensor", "gyro", "--duration", "-1"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("'-1' is invalid for '--duration"), "\(r.stderr)")
        #expect(!r.stderr.contains("Missing value"))
    }

    @Test func theParsersAcceptTheirRangesAndSayWhyNot() throws {
        let seconds = OptionValue.seconds(0.02...3600)
        #expect(try seconds("0.5") == 0.5)
        #expect(try seconds(" 3600 ") == 3600)
        for (text, reason) in [("0.01", "at least 0.02"), ("3601", "at most 3600"), ("nan", "NaN"), ("-inf", "finite"),
                               ("-0.5", "negative"), ("0", "more than 0"), ("x", "not a number")] {
            #expect(throws: OptionValue.Refusal.self) { try seconds(text) }
            do { _ = try seconds(text) } catch { #expect("\(error)".contains(reason), "\(text): \(error)") }
        }
        #expect(try OptionValue.seconds(allowZero: true)("0") == 0)
        #expect(throws: OptionValue.Refusal.self) { try OptionValue.seconds()("1e9") }
        #expect(try OptionValue.hertz()("1000") == 1000)
        #expect(throws: OptionValue.Refusal.self) { try OptionValue.hertz()("1000.5") }
        #expect(try OptionValue.port("0") == 0 && (try OptionValue.port("65535")) == 65535)
        #expect(throws: OptionValue.Refusal.self) { try OptionValue.port("65536") }
        #expect(throws: OptionValue.Refusal.self) { try OptionValue.count()("1.5") }
        #expect(throws: OptionValue.Refusal.self) { try OptionValue.count()("0") }
        // Subnormals are more than 0, yet their reciprocals are infinite.
        for tiny in ["1e-320", "5e-324", "1e-10"] {
            #expect(throws: OptionValue.Refusal.self) { try OptionValue.hertz()(tiny) }
            #expect(throws: OptionValue.Refusal.self) { try OptionValue.seconds()(tiny) }
            #expect(throws: OptionValue.Refusal.self) { try OptionValue.seconds(allowZero: true)(tiny) }
        }
        #expect(try OptionValue.hertz()("1e-8") == 1e-8)
        #expect(try OptionValue.seconds()("1e-9") == 1e-9)
    }

    /// Found from outside: `bench iio --rate 1e-320` passed the check (more than 0 Hz) and trapped
    /// converting its infinite period to an integer.
    @Test func aSubnormalRateIsRefusedNotTrapped() async throws {
        for args in [["bench", "iio", "--rate", "1e-320"], ["bench", "delivery", "--rate=5e-324"], ["bench", "iio", "--seconds", "1e-320"]] {
            let r = try await CLI.run(args, timeout: 20)
            #expect(r.status == 1, "\(args): \(r.status) \(r.stderr)")
            #expect(r.stderr.hasPrefix("Error: ") && r.stderr.split(separator: "\n").count == 1, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("at least"), "\(args): \(r.stderr)")
        }
    }
}

/// A value behind a lock, for results gathered from concurrent work.
final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock(); defer { lock.unlock() }
        return body(&value)
    }
}
