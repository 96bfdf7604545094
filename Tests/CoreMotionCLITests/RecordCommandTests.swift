import Foundation
import MotionRecorderStore
import Testing

@Suite(.serialized) struct RecordCommandTests {
    func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "cm-\(UUID().uuidString)-\(name)"
    }

    @Test func recordsOneSecondAtFiftyHertzAndRecordedPrintsIt() async throws {
        let db = temp("rec.sqlite")
        // An absolute --from taken before the recording: a relative one (-600) missed every sample once,
        // when the query ran more than ten minutes after the recording under CI load.
        let before = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-5))
        let r = try await CLI.run(["record", "--source", "sim:still", "--duration", "1", "--database", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "recorded 50 accelerometer samples at 50 Hz from sim:still into \(db)\n")

        let csv = try await CLI.run(["recorded", "--database", db])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "identifier,start_date,timestamp,x,y,z")
        let rows = lines.dropFirst().map { $0.split(separator: ",").map(String.init) }
        #expect(rows.count == 50)
        #expect(rows.allSatisfy { $0.count == 6 && UInt64($0[0]) != nil && $0[1].hasSuffix("Z") })
        let times = rows.compactMap { Double($0[2]) }
        #expect(times.count == 50 && zip(times.dropFirst(), times).allSatisfy { abs($0 - $1 - 0.02) < 1e-6 })
        #expect(rows.compactMap { Double($0[5]) }.allSatisfy { abs($0 + 1) < 0.02 }, "face up: z ≈ −1 g")

        let jsonl = try await CLI.run(["recorded", "--database", db, "--format", "jsonl", "--from=\(before)"])
        #expect(jsonl.status == 0)
        let objects = jsonl.stdout.split(separator: "\n")
        #expect(objects.count == 50)
        let first = try JSONSerialization.jsonObject(with: Data(try #require(objects.first).utf8)) as? [String: Any]
        #expect(first?.keys.sorted() == ["identifier", "start_date", "timestamp", "x", "y", "z"])
    }

    @Test func recordedPrintsTheStoredRowsExactlyWithinTheRange() async throws {
        let db = temp("known.sqlite")
        // Whole seconds, 5 minutes ago: the third sample is 4 minutes old, well inside --from=-270.
        let base = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down) - 300)
        let store = try RecordingStore(location: .file(db))
        let batch = try #require(try store.insert([
            AccelerometerReading(date: base, timestamp: 10, x: 0.5, y: -0.25, z: -1),
            AccelerometerReading(date: base.addingTimeInterval(0.02), timestamp: 10.02, x: 0, y: 0.125, z: -0.75),
            AccelerometerReading(date: base.addingTimeInterval(60), timestamp: 70, x: 1, y: 2, z: 3),
        ]))
        let iso = ISO8601DateFormatter()
        func millis(_ d: Date, _ fraction: String) -> String { iso.string(from: d).dropLast() + "." + fraction + "Z" }
        let r = try await CLI.run(["recorded", "--database", db, "--from", iso.string(from: base), "--to", iso.string(from: base.addingTimeInterval(1))])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == """
            identifier,start_date,timestamp,x,y,z
            \(batch),\(millis(base, "000")),10.0,0.5,-0.25,-1.0
            \(batch),\(millis(base, "020")),10.02,0.0,0.125,-0.75

            """)
        let recent = try await CLI.run(["recorded", "--database", db, "--from=-270", "--format", "jsonl"])
        #expect(recent.stdout == "{\"identifier\":\(batch),\"start_date\":\"\(millis(base.addingTimeInterval(60), "000"))\",\"timestamp\":70.0,\"x\":1.0,\"y\":2.0,\"z\":3.0}\n")
    }

    @Test func errorsPrintOneLineAndExitNonZero() async throws {
        let missing = temp("missing.sqlite")
        let none = try await CLI.run(["recorded", "--database", missing])
        #expect(none.status == 1)
        #expect(none.stderr == "Error: \(missing): no recordings database (record with `coremotion record` first)\n")
        #expect(!FileManager.default.fileExists(atPath: missing), "reading creates nothing")

        let corrupt = temp("corrupt.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: corrupt))
        for arguments in [["recorded", "--database", corrupt], ["record", "--source", "sim:still", "--duration", "1", "--database", corrupt]] {
            let r = try await CLI.run(arguments)
            #expect(r.status == 1)
            #expect(r.stderr.hasPrefix("Error: \(corrupt): not a usable recordings database"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
        }

        let blocker = temp("file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let unwritable = try await CLI.run(["record", "--source", "sim:still", "--duration", "1", "--database", blocker + "/db.sqlite"])
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("cannot create the folder"), "\(unwritable.stderr)")
    }

    @Test(arguments: [
        (["record", "--source", "nowhere", "--duration", "1", "--database", "/tmp/unused.sqlite"], "unknown source"),
        (["record", "--source", "sim:still", "--duration", "0"], "--duration"),
        (["recorded", "--from", "yesterday"], "--from"),
    ])
    func badArgumentsExitNonZero(arguments: [String], mention: String) async throws {
        let r = try await CLI.run(arguments)
        #expect(r.status != 0)
        #expect(r.stderr.contains(mention), "\(r.stderr)")
    }
}
