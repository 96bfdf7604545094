import Foundation
import GRDB

extension RecordingStore {
    /// Stores a recording request.
    ///
    /// - Parameters:
    ///   - source: the source's identifier, such as `sim:handheld`.
    ///   - start: when the recording was requested (wall clock).
    ///   - duration: how long it was asked to last, in seconds (the end is `start + duration`).
    ///   - sensor: what is recorded. Default ``RecordedSensor/accelerometer``.
    /// - Returns: the session's identifier, for ``insert(_:session:sensor:)``.
    package func beginSession(
        source: String, start: Date, duration: TimeInterval, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderError) -> Int64 {
        let end = start.addingTimeInterval(duration.isFinite ? max(duration, 0) : 0)
        return try write { db in
            try db.execute(
                sql: "INSERT INTO sessions (source, requested_start, requested_end, kind) VALUES (?, ?, ?, ?)",
                arguments: [source, start.timeIntervalSince1970, end.timeIntervalSince1970, sensor.rawValue]
            )
            return db.lastInsertedRowID
        }
    }

    /// Moves a session's requested end (when a recording is extended or stopped early).
    package func updateSession(_ id: Int64, requestedEnd: Date) throws(RecorderError) {
        try write { db in
            try db.execute(sql: "UPDATE sessions SET requested_end = ? WHERE id = ?", arguments: [requestedEnd.timeIntervalSince1970, id])
        }
    }

    /// Every stored session recording `sensor` (default: the accelerometer), oldest request first.
    package func sessions(sensor: RecordedSensor = .accelerometer) throws(RecorderError) -> [RecordingSession] {
        try read { db in
            // A v1 file (opened read-only) has no kind column: all its sessions are the accelerometer's.
            let version2 = try Self.hasVersion2(db)
            if !version2, sensor != .accelerometer { return [] }
            let filter = version2 ? "WHERE kind = ?" : ""
            let arguments: StatementArguments = version2 ? [sensor.rawValue] : []
            return try Row.fetchAll(
                db, sql: "SELECT id, source, requested_start, requested_end FROM sessions \(filter) ORDER BY requested_start, id",
                arguments: arguments
            ).map {
                RecordingSession(
                    id: $0[0], source: $0[1],
                    requestedStart: Date(timeIntervalSince1970: $0[2]), requestedEnd: Date(timeIntervalSince1970: $0[3])
                )
            }
        }
    }

    /// Every stored session recording `sensor` (default: the accelerometer) with how many samples it
    /// holds, oldest request first.
    package func sessionsWithSampleCounts(sensor: RecordedSensor = .accelerometer) throws(RecorderError) -> [(session: RecordingSession, samples: Int)] {
        let all = try sessions(sensor: sensor)
        guard !all.isEmpty else { return [] }
        let t = sensor.table
        let counts: [Int64: Int] = try read { db in
            var out: [Int64: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT batches.session, COUNT(*) FROM \(t) JOIN batches ON batches.id = \(t).batch WHERE batches.session IS NOT NULL GROUP BY batches.session") {
                out[row[0]] = row[1]
            }
            return out
        }
        return all.map { ($0, counts[$0.id] ?? 0) }
    }
}
