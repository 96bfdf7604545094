import Foundation
import GRDB

/// One barometer reading to store (``RecordedSensor/pressure``): the pressure, the sensor's
/// temperature when it reports one, and the two clocks the reading is known by.
package struct PressureReading: Sendable, Hashable {
    /// The wall-clock time of the reading.
    package var date: Date
    /// Seconds since boot (`CLOCK_MONOTONIC`), as every Core Motion timestamp.
    package var timestamp: Double
    /// Air pressure in kPa.
    package var pressure: Double
    /// The sensor's temperature in °C, or `nil` when the barometer does not report it. A NaN or
    /// infinite temperature is stored as unknown (`nil`); the pressure is kept.
    package var temperature: Double?

    /// Creates a reading: pressure in kPa, temperature in °C (`nil`: unknown), `timestamp` in seconds
    /// since boot.
    package init(date: Date, timestamp: Double, pressure: Double, temperature: Double?) {
        self.date = date
        self.timestamp = timestamp
        self.pressure = pressure
        self.temperature = temperature
    }

    /// `true` when the date, timestamp and pressure are finite; the store skips the others.
    package var isFinite: Bool {
        date.timeIntervalSince1970.isFinite && timestamp.isFinite && pressure.isFinite
    }
}

/// One pressure reading read back from the store.
package struct StoredPressureSample: Sendable, Hashable {
    /// The batch the reading was written in (see ``StoredAccelerometerSample/identifier``).
    package var identifier: UInt64
    /// The reading; its temperature is `nil` when it was not known.
    package var reading: PressureReading

    /// Creates a stored sample.
    package init(identifier: UInt64, reading: PressureReading) {
        self.identifier = identifier
        self.reading = reading
    }
}

extension RecordingStore {
    /// Writes pressure `readings` in one transaction, as one batch, into `pressure_samples`: either
    /// every finite reading is committed, or none is. Readings whose date, timestamp or pressure is
    /// NaN or infinite are skipped; a temperature that is not finite is stored as NULL (unknown).
    ///
    /// - Returns: the batch identifier the readings share, or `nil` when none was finite.
    @discardableResult
    package func insert(_ readings: [PressureReading], session: Int64? = nil) throws(RecorderError) -> UInt64? {
        let finite = readings.filter(\.isFinite)
        guard !finite.isEmpty else { return nil }
        return try write { db in
            try db.execute(sql: "INSERT INTO batches (session) VALUES (?)", arguments: [session])
            let batch = db.lastInsertedRowID
            let statement = try db.cachedStatement(
                sql: "INSERT INTO pressure_samples (batch, date, timestamp, pressure, temperature) VALUES (?, ?, ?, ?, ?)"
            )
            for r in finite {
                let temperature = r.temperature.flatMap { $0.isFinite ? $0 : nil }
                try statement.execute(arguments: [batch, r.date.timeIntervalSince1970, r.timestamp, r.pressure, temperature])
            }
            return UInt64(batch)
        }
    }

    /// The pressure readings whose wall-clock date lies in `from…to` (both inclusive), oldest first
    /// (readings with the same date in the order they were written). A v1 or v2 database opened
    /// read-only has no pressure: none is returned.
    ///
    /// - Parameters:
    ///   - limit: the most readings to return; `nil` (default) for all.
    ///   - source: only the readings of sessions recorded from this barometer identifier (such as
    ///     `sim:stairs`); `nil` (default) for every source.
    /// - Throws: ``RecorderError/Kind/invalidRequest`` when `to` is before `from` or either is NaN.
    package func pressureSamples(
        from: Date, to: Date, limit: Int? = nil, source: String? = nil
    ) throws(RecorderError) -> [StoredPressureSample] {
        let a = from.timeIntervalSince1970, b = to.timeIntervalSince1970
        guard !a.isNaN, !b.isNaN, a <= b else {
            throw RecorderError(.invalidRequest, "the range must not end (\(to)) before it starts (\(from))", path: path)
        }
        return try read { db in
            if try !Self.hasTable(of: .pressure, db) { return [] }
            let columns = "p.batch, p.date, p.timestamp, p.pressure, p.temperature"
            let rows = try source.map { source in
                try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT \(columns)
                        FROM pressure_samples p JOIN batches ON batches.id = p.batch JOIN sessions ON sessions.id = batches.session
                        WHERE p.date BETWEEN ? AND ? AND sessions.source = ? ORDER BY p.date, p.id LIMIT ?
                        """,
                    arguments: [a, b, source, limit.map { max($0, 0) } ?? -1]
                )
            } ?? Row.fetchCursor(
                db,
                sql: "SELECT \(columns) FROM pressure_samples p WHERE p.date BETWEEN ? AND ? ORDER BY p.date, p.id LIMIT ?",
                arguments: [a, b, limit.map { max($0, 0) } ?? -1]
            )
            var out: [StoredPressureSample] = []
            while let row = try rows.next() {
                let reading = PressureReading(
                    date: Date(timeIntervalSince1970: row[1]), timestamp: row[2], pressure: row[3], temperature: row[4]
                )
                out.append(StoredPressureSample(identifier: UInt64(row[0] as Int64), reading: reading))
            }
            return out
        }
    }
}
