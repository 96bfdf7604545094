import Foundation
import GRDB

extension RecordingStore {
    /// Writes `readings` in one transaction, as one batch: either every finite reading is committed,
    /// or none is. Readings with a NaN or infinite number are skipped.
    ///
    /// - Parameters:
    ///   - readings: the samples, in any order.
    ///   - session: the ``RecordingSession/id`` they belong to, if any.
    /// - Returns: the batch identifier the samples share, or `nil` when no reading was finite
    ///   (nothing is written then).
    @discardableResult
    package func insert(_ readings: [AccelerometerReading], session: Int64? = nil) throws(RecorderError) -> UInt64? {
        let finite = readings.filter(\.isFinite)
        guard !finite.isEmpty else { return nil }
        return try write { db in
            try db.execute(sql: "INSERT INTO batches (session) VALUES (?)", arguments: [session])
            let batch = db.lastInsertedRowID
            let statement = try db.cachedStatement(sql: "INSERT INTO samples (batch, date, timestamp, x, y, z) VALUES (?, ?, ?, ?, ?, ?)")
            for r in finite {
                try statement.execute(arguments: [batch, r.date.timeIntervalSince1970, r.timestamp, r.x, r.y, r.z])
            }
            return UInt64(batch)
        }
    }

    /// The samples whose wall-clock date lies in `from…to` (both inclusive), oldest first (samples
    /// with the same date in the order they were written).
    ///
    /// - Parameters:
    ///   - limit: the most samples to return; `nil` (default) for all.
    ///   - source: only the samples of sessions recorded from this source identifier (such as
    ///     `sim:walk`, see ``sessions()``); `nil` (default) for every source.
    /// - Throws: ``RecorderError/Kind/invalidRequest`` when `to` is before `from` or either is not finite.
    package func samples(from: Date, to: Date, limit: Int? = nil, source: String? = nil) throws(RecorderError) -> [StoredAccelerometerSample] {
        let a = from.timeIntervalSince1970, b = to.timeIntervalSince1970
        guard !a.isNaN, !b.isNaN, a <= b else {
            throw RecorderError(.invalidRequest, "the range must not end (\(to)) before it starts (\(from))", path: path)
        }
        return try read { db in
            let rows = try source.map { source in
                try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT samples.batch, samples.date, samples.timestamp, samples.x, samples.y, samples.z
                        FROM samples JOIN batches ON batches.id = samples.batch JOIN sessions ON sessions.id = batches.session
                        WHERE samples.date BETWEEN ? AND ? AND sessions.source = ? ORDER BY samples.date, samples.id LIMIT ?
                        """,
                    arguments: [a, b, source, limit.map { max($0, 0) } ?? -1]
                )
            } ?? Row.fetchCursor(
                db,
                sql: "SELECT batch, date, timestamp, x, y, z FROM samples WHERE date BETWEEN ? AND ? ORDER BY date, id LIMIT ?",
                arguments: [a, b, limit.map { max($0, 0) } ?? -1]
            )
            var out: [StoredAccelerometerSample] = []
            while let row = try rows.next() {
                let reading = AccelerometerReading(
                    date: Date(timeIntervalSince1970: row[1]), timestamp: row[2], x: row[3], y: row[4], z: row[5]
                )
                out.append(StoredAccelerometerSample(identifier: UInt64(row[0] as Int64), reading: reading))
            }
            return out
        }
    }

    /// How many samples the store holds.
    package func sampleCount() throws(RecorderError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM samples") ?? 0 }
    }

    /// Deletes the samples taken before `date` (wall clock), and the batches and sessions left empty
    /// and ended before it.
    ///
    /// - Returns: how many samples were deleted.
    @discardableResult
    package func deleteSamples(before date: Date) throws(RecorderError) -> Int {
        let cutoff = date.timeIntervalSince1970
        return try write { db in
            try db.execute(sql: "DELETE FROM samples WHERE date < ?", arguments: [cutoff])
            let deleted = db.changesCount
            if deleted > 0 {
                try db.execute(sql: "DELETE FROM batches WHERE id NOT IN (SELECT DISTINCT batch FROM samples)")
            }
            try db.execute(sql: "DELETE FROM sessions WHERE requested_end < ? AND id NOT IN (SELECT session FROM batches WHERE session IS NOT NULL)", arguments: [cutoff])
            return deleted
        }
    }
}
