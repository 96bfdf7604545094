import Foundation
import MotionTestSupport
import Testing
@testable import MotionRecorderStore

@Suite struct RecordingStoreTests {
    @Test func samplesComeBackExactlyWithTheirBatchIdentifier() throws {
        let store = try RecordingStore(location: .inMemory)
        let base = Date(timeIntervalSince1970: 1_800_000_000.25)
        let written = [reading(1, base: base, x: 0.125, y: -0.5, z: -0.9921875), reading(1.02, base: base, x: 1e-9, y: 3, z: -16)]
        let first = try #require(try store.insert(written))
        let second = try #require(try store.insert([reading(1.04, base: base)]))
        #expect(second > first, "later batches have larger identifiers")
        let back = try everything(store)
        #expect(back.map(\.reading) == written + [reading(1.04, base: base)])
        #expect(back.map(\.identifier) == [first, first, second])
    }

    @Test func aFileStoreKeepsItsSamplesAcrossReopeningAndUsesWAL() throws {
        let path = temporaryDatabase()
        let base = Date()
        do {
            let store = try RecordingStore(location: .file(path))
            try store.insert((0..<10).map { reading(Double($0) * 0.02, base: base) })
        }
        let reopened = try RecordingStore(location: .file(path))
        #expect(try reopened.sampleCount() == 10)
        let mode = try reopened.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test func rangesAreInclusiveAndOrderedByDateWhateverTheWriteOrder() throws {
        let store = try RecordingStore(location: .inMemory)
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        try store.insert([reading(3, base: base), reading(1, base: base)])
        try store.insert([reading(2, base: base), reading(4, base: base), reading(0, base: base)])
        let all = try everything(store).map(\.reading.timestamp)
        #expect(all == [0, 1, 2, 3, 4])
        let middle = try store.samples(from: base.addingTimeInterval(1), to: base.addingTimeInterval(3)).map(\.reading.timestamp)
        #expect(middle == [1, 2, 3], "both ends inclusive")
        let limited = try store.samples(from: base, to: base.addingTimeInterval(10), limit: 2).map(\.reading.timestamp)
        #expect(limited == [0, 1])
        #expect(try store.samples(from: base.addingTimeInterval(5), to: base.addingTimeInterval(9)).isEmpty)
        #expect(throws: RecorderError.self) { try store.samples(from: base.addingTimeInterval(1), to: base) }
    }

    @Test func nonFiniteReadingsAreSkipped() throws {
        let store = try RecordingStore(location: .inMemory)
        let base = Date()
        let batch = try store.insert([
            reading(0, base: base), reading(0.02, base: base, x: .nan), reading(0.04, base: base, y: .infinity),
            AccelerometerReading(date: base, timestamp: .nan, x: 0, y: 0, z: 0), reading(0.06, base: base, z: -.infinity),
            reading(0.08, base: base),
        ])
        #expect(batch != nil)
        #expect(try everything(store).map(\.reading.timestamp) == [0, 0.08])
        #expect(try store.insert([reading(1, base: base, x: .nan)]) == nil, "nothing finite: nothing written")
        #expect(try store.sampleCount() == 2)
    }

    @Test func samplesOlderThanThreeDaysAreDeletedOnOpen() throws {
        let path = temporaryDatabase()
        let now = Date()
        do {
            let store = try RecordingStore(location: .file(path), now: now)
            try store.insert([
                AccelerometerReading(date: now.addingTimeInterval(-RecordingStore.retention - 60), timestamp: 1, x: 0, y: 0, z: -1),
                AccelerometerReading(date: now.addingTimeInterval(-RecordingStore.retention + 60), timestamp: 2, x: 0, y: 0, z: -1),
                AccelerometerReading(date: now, timestamp: 3, x: 0, y: 0, z: -1),
            ])
            #expect(try store.sampleCount() == 3)
        }
        let reopened = try RecordingStore(location: .file(path), now: now)
        #expect(try everything(reopened).map(\.reading.timestamp) == [2, 3])
        #expect(try reopened.deleteSamples(before: now) == 1)
        #expect(try everything(reopened).map(\.reading.timestamp) == [3])
    }

    @Test func aFileThatIsNotADatabaseGivesAClearError() throws {
        let path = temporaryDatabase("corrupt")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RecorderError.self, "opened a corrupt file") { try RecordingStore(location: .file(path)) }
        #expect(error?.kind == .corruptDatabase)
        #expect(error?.description.hasPrefix(path + ": ") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func aFolderThatCannotBeCreatedGivesAClearError() throws {
        let blocker = temporaryDatabase("blocker")
        try Data("a file, not a folder".utf8).write(to: URL(fileURLWithPath: blocker))
        let path = blocker + "/recordings.sqlite"
        let error = #expect(throws: RecorderError.self, "opened a database under a regular file") { try RecordingStore(location: .file(path)) }
        #expect(error?.kind == .unwritable)
        #expect(error?.description.hasPrefix(path + ": ") == true)
    }

    @Test func sessionsAreStoredWithTheirRequestedEnd() throws {
        let store = try RecordingStore(location: .inMemory)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let id = try store.beginSession(source: "sim:still", start: start, duration: 600)
        try store.updateSession(id, requestedEnd: start.addingTimeInterval(900))
        let sessions = try store.sessions()
        #expect(sessions == [RecordingSession(id: id, source: "sim:still", requestedStart: start, requestedEnd: start.addingTimeInterval(900))])
    }

    @Test func theDefaultPathFollowsTheEnvironment() {
        #expect(RecordingStore.defaultPath(environment: ["COREMOTION_RECORDER_DATABASE": "/x/r.sqlite", "XDG_DATA_HOME": "/d"]) == "/x/r.sqlite")
        #expect(RecordingStore.defaultPath(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/coremotion/recordings.sqlite")
        #expect(RecordingStore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/h"]) == "/h/.local/share/coremotion/recordings.sqlite")
        #expect(RecordingStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/share/coremotion/recordings.sqlite")
    }
}

/// Found from outside: `recorded` run while eight recorders created a fresh database said
/// "no such table: sessions". A reader now waits a moment for the tables of a file that has none.
@Suite struct ReadingWhileCreatedTests {
    @Test func aReaderWaitsForTheTablesOfADatabaseBeingCreated() async throws {
        let path = temporaryDatabase("creating")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()), "an empty file, as SQLite leaves it at first")
        let writer = Thread {
            usleep(300_000)
            _ = try? RecordingStore(location: .file(path))
        }
        writer.start()
        // The writer starts 0.3 s later; the reader may wait far longer here than the default 3 s, since
        // a loaded 2-core CI machine can keep the writer's thread from running for seconds.
        // The reader waits on a thread of its own, not on one of the pool the test's task runs on.
        let store = try await offThePool { try RecordingStore(readingFrom: path, schemaWait: 60) }
        #expect(try store.sessionsWithSampleCounts().isEmpty)
    }

    @Test func aFileWithNoTablesIsNotARecordingsDatabase() throws {
        let path = temporaryDatabase("empty")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let started = Date()
        do {
            _ = try RecordingStore(readingFrom: path)
            Issue.record("an empty file opened as a recordings database")
        } catch {
            #expect(error.kind == .corruptDatabase, "\(error)")
            #expect(error.description.contains("no tables"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < RecordingStore.schemaWait + 3, "it waits only a moment")
    }
}
