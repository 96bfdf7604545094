import Foundation
import GRDB

extension RecordingStore {
    /// Stores a recording request.
    ///
    /// - Parameters:
    ///   - source: the source's identifier, such as `sim:handheld`.
    ///   - start: when the recording was requested (wall clock).
    ///   - duration: how long it was asked to last, in seconds (the end is `start + duration`).
    /// - Returns: the session's identifier, for ``insert(_:session:)``.
    package func beginSession(source: String, start: Date, duration: TimeInterval) throws(RecorderError) -> Int64 {
        let end = start.addingTimeInterval(duration.isFinite ? max(duration, 0) : 0)
        return try write { db in
            try db.execute(
                sql: "INSERT INTO sessions (source, requested_start, requested_end) VALUES (?, ?, ?)",
                arguments: [source, start.timeIntervalSince1970, end.timeIntervalSince1970]
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

    /// Every stored session, oldest request first.
    package func sessions() throws(RecorderError) -> [RecordingSession] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, source, requested_start, requested_end FROM sessions ORDER BY requested_start, id").map {
                RecordingSession(
                    id: $0[0], source: $0[1],
                    requestedStart: Date(timeIntervalSince1970: $0[2]), requestedEnd: Date(timeIntervalSince1970: $0[3])
                )
            }
        }
    }

    /// Every stored session with how many samples it holds, oldest request first.
    package func sessionsWithSampleCounts() throws(RecorderError) -> [(session: RecordingSession, samples: Int)] {
        let all = try sessions()
        let counts: [Int64: Int] = try read { db in
            var out: [Int64: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT batches.session, COUNT(*) FROM samples JOIN batches ON batches.id = samples.batch WHERE batches.session IS NOT NULL GROUP BY batches.session") {
                out[row[0]] = row[1]
            }
            return out
        }
        return all.map { ($0, counts[$0.id] ?? 0) }
    }
}
