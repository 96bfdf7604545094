import Foundation
import MotionTestSupport
import Testing

/// Random, truncated, empty and missing files for every command that reads one, through the real
/// executable: exit status 0 or 1, an error as one line starting "Error: ", no crash, no hang.
@Suite struct HostileFileTests {
    func temp(_ name: String) -> String { NSTemporaryDirectory() + "cm-hostile-\(UUID().uuidString)-\(name)" }

    /// Damaged copies of `good`: truncated in a line, random bytes, empty, a NUL in a line.
    func variants(of good: [UInt8], name: String) -> [String] {
        var rng = SystemRandomNumberGenerator()
        let cut = good.count > 2 ? Int.random(in: 1..<good.count - 1, using: &rng) : 0
        let random = (0..<300).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var nul = good
        if !nul.isEmpty { nul[nul.count / 2] = 0 }
        return [Array(good[..<cut]), random, [], nul].enumerated().map { i, bytes in
            let p = temp("\(i)-\(name)")
            _ = FileManager.default.createFile(atPath: p, contents: Data(bytes))
            return p
        }
    }

    @Test func everyCommandThatReadsAFileReportsADamagedOneInOneLine() async throws {
        let raw = temp("raw.csv"), db = temp("rec.sqlite")
        #expect(try await CLI.run(["stream", "--source", "sim:walk", "--sensor", "raw", "--duration", "1", "-o", raw]).status == 0)
        #expect(try await CLI.run(["record", "--source", "sim:still", "--duration", "1", "--database", db]).status == 0)
        let csv = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let sqlite = try [UInt8](Data(contentsOf: URL(fileURLWithPath: db)))
        var cases: [[String]] = []
        for p in variants(of: csv, name: "raw.csv") + ["/nonexistent/raw.csv"] {
            cases += [["fuse", p, "-o", p + ".out"], ["steps", p], ["bench", "read", p, "--runs", "1"],
                      ["stream", "--source", "replay:" + p, "--sensor", "raw", "--duration", "5"]]
        }
        for p in variants(of: sqlite, name: "rec.sqlite") + ["/nonexistent/rec.sqlite"] {
            cases += [["recorded", "--database", p], ["recorded", "--database", p, "--sessions"]]
        }
        let failures = LockedBox([String]())
        let all = cases
        await concurrently(all.count) { i in
            guard let r = try? await CLI.run(all[i], timeout: 30) else {
                failures.withLock { $0.append("\(all[i]): did not run or hung") }
                return
            }
            let lines = r.stderr.split(separator: "\n")
            if r.status != 0 && r.status != 1 {
                failures.withLock { $0.append("\(all[i]): exit status \(r.status) \(r.stderr.prefix(300))") }
            } else if r.status == 1 && (lines.count != 1 || !lines[0].hasPrefix("Error: ")) {
                failures.withLock { $0.append("\(all[i]): not one 'Error: ' line: \(r.stderr.debugDescription)") }
            }
        }
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) of \(all.count):\n\(found.joined(separator: "\n"))")
    }
}
