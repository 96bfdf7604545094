import Foundation
import MotionTestSupport
import Testing

/// The VM test rig (`scripts/vm`): Debian's kernel booted under QEMU, a scenario script run inside on
/// the host's own root, its output parsed.
///
/// A scenario prints lines starting with `@@ ` for the tests (see `scripts/vm/scenarios/lib.sh`):
/// `@@ value KEY=VALUE`, and command blocks `@@ begin NAME` (standard output), `@@ stderr NAME`
/// (standard error), `@@ end NAME status=N`.
enum VMRig {
    /// The repository: this file is Tests/LinuxKernelTests/VMRig.swift.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `COREMOTION_REQUIRE_VM=1` (set by `.ci/run`): a rig that cannot run is a failure, not a skip.
    static let required = ProcessInfo.processInfo.environment["COREMOTION_REQUIRE_VM"] == "1"

    /// Why the rig cannot run here, or nil.
    static let unavailableReason: String? = {
        let fm = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let qemu = path.split(separator: ":").contains { fm.isExecutableFile(atPath: "\($0)/qemu-system-x86_64") }
        if !qemu { return "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)" }
        let cache = ProcessInfo.processInfo.environment["COREMOTION_VM_CACHE"] ?? repository.appendingPathComponent(".build-vm").path
        guard let version = try? String(contentsOfFile: cache + "/kernel/current", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines),
            fm.fileExists(atPath: "\(cache)/kernel/\(version)/.ready")
        else { return "no kernel in \(cache) (run scripts/vm/fetch-kernel)" }
        if !fm.isExecutableFile(atPath: coremotion.path) { return "no coremotion binary at \(coremotion.path)" }
        return nil
    }()

    /// Whether the VM tests run: when the rig is available, and when it is required (then they fail).
    static var enabled: Bool { unavailableReason == nil || required }

    /// The skip message of the VM suites.
    static var skipComment: Comment {
        Comment(rawValue: "VM rig unavailable, VM tests skipped: \(unavailableReason ?? "")")
    }

    /// The built `coremotion` next to the test bundle (as the CLI tests find it).
    static let coremotion: URL = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("coremotion")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        // swift-testing's runner lives in the build folder itself.
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("coremotion")
    }()

    /// Boots the VM and runs `scripts/vm/scenarios/NAME` in it.
    ///
    /// One VM at a time, and never beside the browser or a soak (`Exclusive`): TCG emulation keeps a
    /// core busy and the machines these run on have two. Awaiting it holds no test thread.
    static func run(_ scenario: String, _ arguments: [String] = [], timeout: Double = 900) async -> ScenarioRun {
        if let reason = unavailableReason {
            return ScenarioRun(failure: "COREMOTION_REQUIRE_VM=1 but the VM rig is unavailable: \(reason)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["COREMOTION_BIN"] = coremotion.path
        environment["COREMOTION_CLI"] = coremotion.path
        environment.removeValue(forKey: "COREMOTION_SOURCE")
        let script = repository.appendingPathComponent("scripts/vm/scenarios/\(scenario)").path
        return await Exclusive.run("VM \(scenario)") {
            let started = Date()
            do {
                // scripts/vm/run enforces the timeout inside; the harness's own is a last resort. Not
                // queued for a process slot: holding the gate while dozens of light tests' processes go
                // first kept every other heavy run waiting too (the gate's holders are one at a time).
                let r = try await ChildProcess.run(repository.appendingPathComponent("scripts/vm/run"),
                                                   ["--timeout", String(Int(timeout)), script] + arguments,
                                                   environment: environment, currentDirectory: repository, timeout: timeout + 120,
                                                   limited: false)
                return ScenarioRun(status: r.status, output: r.stdout, stderr: r.stderr, seconds: Date().timeIntervalSince(started))
            } catch {
                return ScenarioRun(failure: "cannot start scripts/vm/run: \(error)")
            }
        }
    }

    /// One boot shared by the tests of a suite: started by the first test that asks, awaited by all.
    final class Shared: Sendable {
        private let task: Task<ScenarioRun, Never>

        init(_ scenario: String, _ arguments: [String] = [], timeout: Double = 900) {
            task = Task { await VMRig.run(scenario, arguments, timeout: timeout) }
        }

        var value: ScenarioRun { get async { await task.value } }
    }
}

/// One command a scenario ran: its output lines and status.
struct CommandBlock: Sendable {
    var stdout: [String] = []
    var stderr: [String] = []
    var status: Int32?

    /// The data rows of `stream --format csv`: `timestamp,x,y,z` or `timestamp,sensor,x,y,z`.
    func rows(_ sensor: String? = nil) -> [Row] {
        stdout.compactMap { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let t = Double(f.first ?? "") else { return nil }
            let name = f.count == 5 ? f[1] : nil
            if let sensor, name != nil, name != sensor { return nil }
            let v = f.suffix(3).compactMap(Double.init)
            guard v.count == 3 else { return nil }
            return Row(t: t, sensor: name, x: v[0], y: v[1], z: v[2])
        }
    }

    /// The non-empty lines of standard error that are not the logger's warnings.
    var errorLines: [String] { stderr.filter { $0.hasPrefix("Error:") } }
}

struct Row: Sendable {
    var t: Double
    var sensor: String?
    var x: Double, y: Double, z: Double
}

/// A scenario's run: status, raw output and what it reported.
struct ScenarioRun: Sendable {
    var status: Int32
    var output: String
    var stderr: String
    var seconds: Double
    var values: [String: String] = [:]
    var blocks: [String: CommandBlock] = [:]
    /// Why the run did not happen (the rig is required but unavailable, or it could not start).
    var failure: String?

    init(failure: String) {
        status = -1; output = ""; stderr = ""; seconds = 0
        self.failure = failure
    }

    init(status: Int32, output: String, stderr: String, seconds: Double) {
        self.status = status; self.output = output; self.stderr = stderr; self.seconds = seconds
        var current: String?
        var inStderr = false
        for line in output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("@@ value ") {
                let kv = line.dropFirst("@@ value ".count)
                if let eq = kv.firstIndex(of: "=") { values[String(kv[..<eq])] = String(kv[kv.index(after: eq)...]) }
            } else if line.hasPrefix("@@ begin ") {
                current = String(line.dropFirst("@@ begin ".count)); inStderr = false
                blocks[current!] = CommandBlock()
            } else if line.hasPrefix("@@ stderr "), current != nil {
                inStderr = true
            } else if line.hasPrefix("@@ end "), let name = current {
                if let s = line.range(of: "status=") { blocks[name]?.status = Int32(line[s.upperBound...]) }
                current = nil
            } else if let name = current {
                if inStderr {
                    if !line.isEmpty { blocks[name]?.stderr.append(line) }
                } else {
                    blocks[name]?.stdout.append(line)
                }
            }
        }
    }

    /// Records why the scenario did not run to its end; false then.
    func ranToEnd(_ location: SourceLocation = #_sourceLocation) -> Bool {
        if let failure {
            Issue.record(Comment(rawValue: failure), sourceLocation: location)
            return false
        }
        if status != 0 {
            Issue.record(Comment(rawValue: "the scenario ended with status \(status) after \(Int(seconds)) s\n\(output)\n\(stderr)"), sourceLocation: location)
            return false
        }
        return true
    }

    func block(_ name: String, _ location: SourceLocation = #_sourceLocation) -> CommandBlock {
        guard let b = blocks[name] else {
            Issue.record(Comment(rawValue: "no output of \(name) in the scenario's output:\n\(output)"), sourceLocation: location)
            return CommandBlock()
        }
        return b
    }

    func double(_ key: String) -> Double? { values[key].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
}

/// Standard gravity: the g of Core Motion's accelerations and of IIO scales (m/s²).
let standardGravity = 9.80665

/// A `RESULT FAMILY STEP …` line of the device scenarios (`scripts/vm/devices/README.md`): its
/// `KEY=VALUE` fields and its bare words after the prefix asked for.
struct ResultLine: Sendable {
    var fields: [String: String] = [:]
    var words: [String] = []

    func double(_ key: String) -> Double? { fields[key].flatMap(Double.init) }
    func int(_ key: String) -> Int? { fields[key].flatMap { Int($0) } }

    /// The 8 words of `csvstat.py csv`: ROWS MEAN_X MEAN_Y MEAN_Z RATE_HZ MIN_DT MAX_DT BACKWARDS.
    var stat: (rows: Int, mean: (x: Double, y: Double, z: Double), rate: Double, maxDt: Double, backwards: Int)? {
        let v = words.prefix(8).compactMap(Double.init)
        guard v.count == 8 else { return nil }
        return (Int(v[0]), (v[1], v[2], v[3]), v[4], v[6], Int(v[7]))
    }
}

extension ScenarioRun {
    /// The first line starting with `RESULT PREFIX ` (e.g. `hid face-up accelerometer`), parsed.
    func result(_ prefix: String, _ location: SourceLocation = #_sourceLocation) -> ResultLine? {
        let head = "RESULT \(prefix) "
        guard let line = output.split(separator: "\n").map(String.init).first(where: { $0.hasPrefix(head) || $0 == head.dropLast() }) else {
            Issue.record(Comment(rawValue: "no line '\(head)…' in the scenario's output:\n\(output)"), sourceLocation: location)
            return nil
        }
        var r = ResultLine()
        for word in line.dropFirst(head.count).split(separator: " ").map(String.init) {
            if let eq = word.firstIndex(of: "="), word.first != "=" {
                r.fields[String(word[..<eq])] = String(word[word.index(after: eq)...])
            } else {
                r.words.append(word)
            }
        }
        return r
    }

    /// Records that a device scenario did not get to its `RESULT FAMILY done` line; false then.
    func reachedDone(_ family: String, _ location: SourceLocation = #_sourceLocation) -> Bool {
        guard ranToEnd(location) else { return false }
        if !output.contains("RESULT \(family) done") {
            Issue.record(Comment(rawValue: "the scenario did not finish:\n\(output)"), sourceLocation: location)
            return false
        }
        return true
    }
}
