import Foundation
import Testing
@testable import MotionRecorderStore

@Suite struct RecordingWriterTests {
    @Test func aBatchIsWrittenWhenFullAndTheRestOnClose() throws {
        let store = try RecordingStore(location: .inMemory)
        let writer = RecordingWriter(store: store, maximumBatchCount: 10, maximumBatchAge: 100)
        let base = Date()
        for i in 0..<25 { try writer.append(reading(Double(i) * 0.01, base: base)) }
        #expect(try store.sampleCount() == 20, "two full batches, five waiting")
        #expect(writer.batchCount == 2)
        try writer.close()
        #expect(try store.sampleCount() == 25)
        #expect(writer.batchCount == 3 && writer.writtenCount == 25)
        try writer.append(reading(1, base: base))
        try writer.close()
        #expect(try store.sampleCount() == 25, "a closed writer takes nothing more")
        #expect(Set(try everything(store).map(\.identifier)).count == 3, "one identifier per batch")
    }

    @Test func aBatchIsWrittenWhenItSpansHalfASecondOfSampleTime() throws {
        let store = try RecordingStore(location: .inMemory)
        let writer = RecordingWriter(store: store, maximumBatchCount: 1000)
        let base = Date()
        for i in 0..<5 { try writer.append(reading(Double(i) * 0.1, base: base)) }
        #expect(try store.sampleCount() == 0, "0.4 s buffered")
        try writer.append(reading(0.5, base: base))
        #expect(try store.sampleCount() == 6, "0.5 s reached: written")
    }

    @Test func nonFiniteReadingsAreCountedAndDropped() throws {
        let store = try RecordingStore(location: .inMemory)
        let writer = RecordingWriter(store: store)
        try writer.append(reading(0, x: .nan))
        try writer.append(reading(0.02))
        try writer.close()
        #expect(writer.skippedCount == 1 && writer.writtenCount == 1)
        #expect(try store.sampleCount() == 1)
    }

    @Test func aFailedBatchLosesNoCommittedRowAndStopsTheWriter() throws {
        let store = try RecordingStore(location: .inMemory)
        // A batch containing x = 99 fails inside its transaction, as a full disk would.
        try store.write { db in
            try db.execute(sql: "CREATE TRIGGER fail BEFORE INSERT ON samples WHEN NEW.x = 99 BEGIN SELECT RAISE(ABORT, 'simulated failure'); END")
        }
        let writer = RecordingWriter(store: store, maximumBatchCount: 3, maximumBatchAge: 100)
        let base = Date()
        for i in 0..<3 { try writer.append(reading(Double(i), base: base)) }
        try writer.append(reading(3, base: base))
        try writer.append(reading(4, base: base, x: 99))
        #expect(throws: RecorderError.self) { try writer.append(reading(5, base: base)) }
        try writer.append(reading(6, base: base))
        #expect(throws: RecorderError.self) { try writer.close() }
        #expect(writer.error != nil)
        #expect(try everything(store).map(\.reading.timestamp) == [0, 1, 2], "the committed batch stays, the failed one is all or nothing")
    }
}
