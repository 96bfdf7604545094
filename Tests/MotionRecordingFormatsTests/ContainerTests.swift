import Foundation
import MotionFusion
import MotionRecordingFormats
import MotionSources
import Testing

@Suite struct ContainerTests {
    let csv = "timestamp,sensor,x,y,z\n1,gyro,1,2,3\n2,accelerometer,0,0,-1\n"

    @Test func detectsFromContentNotName() throws {
        #expect(try RecordingInput.open(bytes: Array(csv.utf8), name: "x.json").format == .csv)
        #expect(try RecordingInput.open(bytes: Array("{\"timestamp\":1,\"sensor\":\"gyro\",\"x\":1,\"y\":2,\"z\":3}\n".utf8), name: "x.csv").format == .jsonl)
        #expect(try RecordingInput.open(bytes: Array("# BROAD trial x; sampling_rate_hz=100\nt,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z,mag_x,mag_y,mag_z\n".utf8)).format == .broad)
    }

    @Test func emptyBinaryAndUnknownFilesAreClearErrors() {
        #expect(errorText { _ = try readAll("") } == "rec.csv: empty file: no header and no samples")
        #expect(errorText { _ = try readAll("\u{FEFF}\r\n \n") } == "rec.csv: empty file: no header and no samples")
        let binary: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 3, 0, 0x3E, 0]
        #expect(errorText { _ = try RecordingInput.open(bytes: binary, name: "a.out") }
                == "a.out: binary data: not a recording in a known format (csv, jsonl, broad, sensorlogger, sensorlog, phyphox, hyperimu)")
        #expect(errorText { _ = try readAll("hello world\n") }
                == "rec.csv:1: not a recording in a known format (csv, jsonl, broad, sensorlogger, sensorlog, phyphox, hyperimu); it starts 'hello world'. Use --input-format to force one")
    }

    @Test func zipArchiveStoredAndDeflated() throws {
        for deflate in [false, true] {
            let zip = ZipFixture.archive([("rec/rec.csv", csv)], deflate: deflate)
            var input = try RecordingInput.open(bytes: zip, name: "rec.zip")
            #expect(input.format == .csv)
            #expect(input.metadata["container"] == "zip")
            let s = try input.readAllInFileOrder()
            #expect(s.count == 2)
            #expect(s[1].path == "rec.zip/rec/rec.csv")
            #expect(s[1].line == 3)
        }
    }

    @Test func largeDeflatedEntryStreams() throws {
        var text = "timestamp,sensor,x,y,z\n"
        for i in 0..<30_000 { text += "\(i),magnetometer,1,2,3\n" }
        let zip = ZipFixture.archive([("big.csv", text)])
        #expect(try readAll(text).count == 30_000)
        var input = try RecordingInput.open(bytes: zip, name: "big.zip")
        #expect(try input.readAllInFileOrder().count == 30_000)
    }

    @Test func truncatedAndCorruptZipsAreErrors() throws {
        let zip = ZipFixture.archive([("rec.csv", csv)])
        #expect(errorText { _ = try RecordingInput.open(bytes: Array(zip.prefix(zip.count - 30)), name: "t.zip") }
                == "t.zip: truncated zip archive (no end of central directory)")
        #expect(errorText { _ = try RecordingInput.open(bytes: Array(zip.prefix(10)), name: "t.zip") }
                == "t.zip: truncated zip archive (no end of central directory)")
        var corrupt = zip
        corrupt[40] ^= 0x20  // a byte of the entry's data
        #expect(errorText {
            var input = try RecordingInput.open(bytes: corrupt, name: "c.zip", format: .csv)
            _ = try input.readAllInFileOrder()
        }?.hasPrefix("c.zip/rec.csv") == true)
        var emptyZip: [UInt8] = [0x50, 0x4B, 5, 6]
        emptyZip += [UInt8](repeating: 0, count: 18)
        #expect(errorText { _ = try RecordingInput.open(bytes: emptyZip, name: "e.zip") } == "e.zip: not a known export: it holds no files")
    }

    @Test func everyTruncationOfAZipFailsCleanly() {
        let zip = ZipFixture.archive([("a.csv", csv), ("b.csv", csv)])
        for n in 0..<zip.count {
            // Must not crash; either an error or (never) samples from a damaged archive.
            do {
                var input = try RecordingInput.open(bytes: Array(zip.prefix(n)), name: "t.zip")
                _ = try input.readAllInFileOrder()
                Issue.record("truncated at \(n) was read")
            } catch {}
        }
    }

    @Test func folderOfRecordingsAndUnknownFolders() throws {
        let (input, s) = try readAll(entries: ["acc.csv": "timestamp,x,y,z\n# sensor=accelerometer\n1,0,0,-1\n", "gyro.csv": "timestamp,x,y,z\n# sensor=gyro\n1,1,2,3\n"])
        #expect(input.format == .csv)
        #expect(input.streams.count == 2)
        #expect(s.map(\.path) == ["export/acc.csv", "export/gyro.csv"])
        #expect(errorText { _ = try readAll(entries: ["notes.txt": "hello", "photo.jpg": "\u{0}\u{1}"]) }
                == "export: not a known export (Sensor Logger, phyphox, or recordings of the project's own formats); it holds notes.txt, photo.jpg")
    }

    @Test func realFilesAndFolders() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("recordings-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(csv.utf8).write(to: dir.appendingPathComponent("rec.csv"))
        var file = try RecordingInput.open(path: dir.appendingPathComponent("rec.csv").path)
        #expect(file.metadata["container"] == "file")
        #expect(try file.readAllInFileOrder().count == 2)
        let folder = try RecordingInput.open(path: dir.path)
        #expect(folder.format == .csv && folder.metadata["container"] == "folder")
        try Data("junk".utf8).write(to: dir.appendingPathComponent("b.bin"))
        try Data("more junk".utf8).write(to: dir.appendingPathComponent("c.bin"))
        #expect(errorText { _ = try RecordingInput.open(path: dir.path + "/nope.csv") } == dir.path + "/nope.csv: no such file or folder")
    }
}
