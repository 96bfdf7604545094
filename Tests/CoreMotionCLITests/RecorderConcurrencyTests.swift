import Foundation
import MotionTestSupport
import MotionRecorderStore
import MotionSources
@testable import OpenCoreMotion
import Testing

/// Several real `coremotion record` processes, and an in-process recorder (what
/// `CMSensorRecorder` uses), on one database: no "database is locked", each recording apart by
/// source; reading from a read-only place; the stored rate is the rate reported.
@Suite(.serialized) struct RecorderConcurrencyTests {
    func temp(_ name: String) -> String {
        NSTemporaryDirectory() + "cm-\(UUID().uuidString)-\(name)"
    }

    /// Runs `count` record processes at once; returns their results.
    func recordAtOnce(_ sources: [String], database: String, seconds: String = "1") async -> [CLIResult?] {
        let results = LockedBox([CLIResult?](repeating: nil, count: sources.count))
        await concurrently(sources.count, width: sources.count) { i in
            let r = try? await CLI.run(["record", "--source", sources[i], "--duration", seconds, "--database", database], timeout: 60, limited: false)
            results.withLock { $0[i] = r }
        }
        return results.withLock { $0 }
    }

    @Test func sixProcessesOnAFreshDatabaseAllRecordApartBySource() async throws {
        let sources = ["sim:still", "sim:walk", "sim:still", "sim:walk", "sim:still", "sim:walk"]
        // Twice, each on a fresh file: the schema-creation race is at the first open.
        for round in 0..<2 {
            let db = temp("fresh-\(round).sqlite")
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) } }
            let results = await recordAtOnce(sources, database: db)
            for (i, r) in results.enumerated() {
                #expect(r?.status == 0, "process \(i): \(r?.stderr ?? "did not run")")
                #expect(r?.stderr.contains("locked") == false)
                #expect(r?.stdout == "recorded 50 accelerometer samples at 50 Hz from \(sources[i]) into \(db)\n")
            }
            let listing = try await CLI.run(["recorded", "--database", db, "--sessions"])
            #expect(listing.status == 0, "\(listing.stderr)")
            let rows = listing.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").map(String.init) }
            #expect(rows.count == 6)
            #expect(rows.map { $0[1] }.sorted() == sources.sorted())
            #expect(rows.allSatisfy { $0.last == "50" }, "\(rows)")
            // Filtered by source: only that source's samples (walk moves; still lies face up).
            let walk = try await CLI.run(["recorded", "--database", db, "--source", "sim:walk"])
            let still = try await CLI.run(["recorded", "--database", db, "--source", "sim:still"])
            let all = try await CLI.run(["recorded", "--database", db])
            let count = { (r: CLIResult) in r.stdout.split(separator: "\n").count - 1 }
            #expect(count(walk) == 150 && count(still) == 150 && count(all) == 300)
            let stillZ = still.stdout.split(separator: "\n").dropFirst().compactMap { Double($0.split(separator: ",")[5]) }
            #expect(stillZ.allSatisfy { abs($0 + 1) < 0.02 }, "no walking sample among the still ones")
        }
    }

    @Test func processesAndAnInProcessRecorderShareOneDatabase() async throws {
        let db = temp("shared.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) } }
        // The in-process recorder writes small batches all along while two processes record.
        let store = try RecordingStore(location: .file(db))
        let recording = try AccelerometerRecording(store: store, source: "in-process", duration: 10, maximumBatchCount: 5)
        let writing = Thread {
            let t0 = ProcessInfo.processInfo.systemUptime
            for i in 0..<150 {
                _ = try? recording.receive(timestamp: t0 + Double(i) / 50, x: 0, y: 0, z: -1)
                if i % 5 == 4 { usleep(30_000) }
            }
            try? recording.finish()
        }
        writing.start()
        let results = await recordAtOnce(["sim:still", "sim:walk"], database: db)
        await eventually(giveUpAfter: 120) { recording.isFinished }
        #expect(recording.isFinished, "the in-process recording ended")
        for r in results { #expect(r?.status == 0, "\(r?.stderr ?? "did not run")") }
        let counts = Dictionary(try store.sessionsWithSampleCounts().map { ($0.session.source, $0.samples) }, uniquingKeysWith: +)
        #expect(counts == ["in-process": 150, "sim:still": 50, "sim:walk": 50])
    }

    @Test func recordedReadsADatabaseInAReadOnlyPlace() async throws {
        let dir = temp("ro")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer {
            chmod(dir, 0o755)
            try? FileManager.default.removeItem(atPath: dir)
        }
        let db = dir + "/recordings.sqlite"
        #expect(try await CLI.run(["record", "--source", "sim:still", "--duration", "1", "--database", db]).status == 0)
        // Root ignores permissions: make the folder a read-only mount in a private namespace when
        // possible; otherwise (not root) take the write permission away.
        let unshare = Process()
        unshare.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        unshare.arguments = ["-m", "sh", "-c", "mount --bind -o ro \"$0\" \"$0\" && ! touch \"$0/probe\" 2>/dev/null && exec \"$1\" recorded --database \"$0/recordings.sqlite\"",
                             dir, CLI.executable.path]
        let out = Pipe(), err = Pipe()
        unshare.standardOutput = out
        unshare.standardError = err
        var stdout = "", stderr = ""
        if getuid() == 0, (try? unshare.run()) != nil {
            let outText = PipeDrain(out.fileHandleForReading), errText = PipeDrain(err.fileHandleForReading)
            await exited(unshare)
            stdout = await outText.text()
            stderr = await errText.text()
            #expect(unshare.terminationStatus == 0, "\(stderr)")
        } else {
            chmod(dir, 0o555)
            let r = try await CLI.run(["recorded", "--database", db])
            #expect(r.status == 0, "\(r.stderr)")
            stdout = r.stdout
            stderr = r.stderr
        }
        #expect(!stderr.contains("readonly"), "\(stderr)")
        #expect(stdout.split(separator: "\n").count == 51, "the header and 50 samples: \(stdout.prefix(200)) \(stderr)")
    }

    @Test func aFasterSourceIsStoredAtTheRateReported() async throws {
        let csv = temp("100hz.csv"), db = temp("rate.sqlite")
        defer { for p in [csv, db, db + "-wal", db + "-shm"] { try? FileManager.default.removeItem(atPath: p) } }
        let stream = try await CLI.run(["stream", "--source", "sim:still", "--sensor", "accelerometer", "--interval", "0.01", "--duration", "3", "-o", csv])
        #expect(stream.status == 0, "\(stream.stderr)")
        let r = try await CLI.run(["record", "--source", "replay:" + csv, "--duration", "2", "--database", db])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("recorded 100 accelerometer samples at 50 Hz"), "\(r.stdout)")
        let rows = try await CLI.run(["recorded", "--database", db]).stdout.split(separator: "\n").dropFirst()
        let times = rows.compactMap { Double($0.split(separator: ",")[2]) }
        #expect(times.count == 100)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.allSatisfy { abs($0 - 0.02) < 0.003 }, "50 Hz: \(gaps.prefix(5))")
    }
    /// Eight processes at once with a `CMSensorRecorder` user in this process, on a fresh database
    /// and then on the same, existing one: every process succeeds, nothing is locked, every sample
    /// committed is there, each recording apart by source.
    @Test func eightProcessesAndACMSensorRecorderOnAFreshThenAnExistingDatabase() async throws {
        let db = temp("eight.sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) } }
        let sources = (0..<8).map { $0 % 2 == 0 ? "sim:still" : "sim:walk" }
        for round in 0..<2 {
            // The recorder's simulator runs on a virtual clock: 30 s of samples written as fast as
            // they are made, in batches, while the processes write theirs.
            let device = SimulatedDevice(scenario: .rotate, clock: .virtual(startTime: ProcessInfo.processInfo.systemUptime))
            // Used on a thread: like Apple's, CMSensorRecorder is not `Sendable`, but it is callable from any thread.
            nonisolated(unsafe) let recorder = CMSensorRecorder(source: device, databasePath: db)
            let inProcess = Thread { recorder.recordAccelerometer(forDuration: 30) }
            inProcess.start()
            let results = await recordAtOnce(sources, database: db)
            for (i, r) in results.enumerated() {
                #expect(r?.status == 0, "round \(round), process \(i): \(r?.stderr ?? "did not run")")
                #expect(r?.stderr.contains("locked") == false)
            }
            await eventually { !recorder.isRecording && !inProcess.isExecuting }
            #expect(!recorder.isRecording, "the in-process recording ended")
            let store = try RecordingStore(location: .file(db))
            let sessions = try store.sessionsWithSampleCounts()
            let processes = sessions.filter { $0.session.source != "sim:rotate" }
            let simulator = sessions.filter { $0.session.source == "sim:rotate" }
            #expect(processes.count == 8 * (round + 1), "\(sessions.map(\.session.source))")
            #expect(processes.allSatisfy { $0.samples == 50 }, "\(processes.map(\.samples))")
            #expect(simulator.count == round + 1 && simulator.allSatisfy { $0.samples == 1500 }, "\(simulator.map(\.samples))")
            let all = try #require(recorder.accelerometerData(from: Date().addingTimeInterval(-3600), to: Date().addingTimeInterval(3600)))
            #expect(all.samples.count == (8 * 50 + 1500) * (round + 1), "every committed sample reads back")
        }
    }
}
