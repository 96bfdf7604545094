import Foundation
import GRDB

extension RecordingStore {
    /// Writes `readings` in one transaction, as one batch: either every finite reading is committed,
    /// or none is. Readings with a NaN or infinite number are skipped.
    ///
    /// - Parameters:
    ///   - readings: the samples, in any order.
    ///   - session: the ``RecordingSession/id`` they belong to, if any.
    ///   - sensor: the table they go to: acceleration in g, or rotation rate in rad/s. Default
    ///     ``RecordedSensor/accelerometer``.
    /// - Returns: the batch identifier the samples share, or `nil` when no reading was finite
    ///   (nothing is written then).
    @discardableResult
    package func insert(
        _ readings: [AccelerometerReading], session: Int64? = nil, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderError) -> UInt64? {
        guard sensor.isVector else {
            throw RecorderError(.invalidRequest, "\(sensor.rawValue) samples are not x, y, z readings", path: path)
        }
        let finite = readings.filter(\.isFinite)
        guard !finite.isEmpty else { return nil }
        return try write { db in
            try db.execute(sql: "INSERT INTO batches (session) VALUES (?)", arguments: [session])
            let batch = db.lastInsertedRowID
            let statement = try db.cachedStatement(sql: "INSERT INTO \(sensor.table) (batch, date, timestamp, x, y, z) VALUES (?, ?, ?, ?, ?, ?)")
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
    ///     `sim:walk`, see ``sessions(sensor:)``); `nil` (default) for every source.
    ///   - sensor: whose samples: acceleration in g (default) or rotation rate in rad/s, in the
    ///     reading's `x`, `y`, `z`. A v1 database opened read-only has no rotation rate: none is returned.
    /// - Throws: ``RecorderError/Kind/invalidRequest`` when `to` is before `from` or either is not finite.
    package func samples(
        from: Date, to: Date, limit: Int? = nil, source: String? = nil, sensor: RecordedSensor = .accelerometer
    ) throws(RecorderError) -> [StoredAccelerometerSample] {
        let a = from.timeIntervalSince1970, b = to.timeIntervalSince1970
        guard !a.isNaN, !b.isNaN, a <= b else {
            throw RecorderError(.invalidRequest, "the range must not end (\(to)) before it starts (\(from))", path: path)
        }
        guard sensor.isVector else {
            throw RecorderError(.invalidRequest, "\(sensor.rawValue) samples are not x, y, z readings", path: path)
        }
        let t = sensor.table
        return try read { db in
            if try !Self.hasTable(of: sensor, db) { return [] }
            let rows = try source.map { source in
                try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT \(t).batch, \(t).date, \(t).timestamp, \(t).x, \(t).y, \(t).z
                        FROM \(t) JOIN batches ON batches.id = \(t).batch JOIN sessions ON sessions.id = batches.session
                        WHERE \(t).date BETWEEN ? AND ? AND sessions.source = ? ORDER BY \(t).date, \(t).id LIMIT ?
                        """,
                    arguments: [a, b, source, limit.map { max($0, 0) } ?? -1]
                )
            } ?? Row.fetchCursor(
                db,
                sql: "SELECT batch, date, timestamp, x, y, z FROM \(t) WHERE date BETWEEN ? AND ? ORDER BY date, id LIMIT ?",
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

    /// How many samples of `sensor` (default: the accelerometer) the store holds.
    package func sampleCount(sensor: RecordedSensor = .accelerometer) throws(RecorderError) -> Int {
        try read { db in
            if try !Self.hasTable(of: sensor, db) { return 0 }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(sensor.table)") ?? 0
        }
    }

    /// Deletes the samples of every sensor taken before `date` (wall clock), and the batches and
    /// sessions left empty and ended before it.
    ///
    /// - Returns: how many samples were deleted (of every sensor).
    @discardableResult
    package func deleteSamples(before date: Date) throws(RecorderError) -> Int {
        let cutoff = date.timeIntervalSince1970
        return try write { db in
            var deleted = 0
            for sensor in RecordedSensor.allCases {
                try db.execute(sql: "DELETE FROM \(sensor.table) WHERE date < ?", arguments: [cutoff])
                deleted += db.changesCount
            }
            if deleted > 0 {
                let kept = RecordedSensor.allCases.map { "id NOT IN (SELECT DISTINCT batch FROM \($0.table))" }
                try db.execute(sql: "DELETE FROM batches WHERE " + kept.joined(separator: " AND "))
            }
            try db.execute(sql: "DELETE FROM sessions WHERE requested_end < ? AND id NOT IN (SELECT session FROM batches WHERE session IS NOT NULL)", arguments: [cutoff])
            return deleted
        }
    }
}
