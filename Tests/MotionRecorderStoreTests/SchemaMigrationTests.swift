import Foundation
import GRDB
import Testing
@testable import MotionRecorderStore

/// A database written by the v1 schema (accelerometer only), made here with raw SQL as v1 wrote it
/// (not through the store's own migrator), must open, keep its samples and take rotation rate after.
@Suite struct SchemaMigrationTests {
    /// Two sessions and three samples in a v1 file, as `CMSensorRecorder` of schema v1 left them.
    private func makeVersion1Database(at path: String, base: Date) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations (identifier) VALUES ('v1');
                CREATE TABLE sessions (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    source TEXT NOT NULL,
                    requested_start REAL NOT NULL,
                    requested_end REAL NOT NULL
                );
                CREATE TABLE batches (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    session INTEGER REFERENCES sessions(id) ON DELETE SET NULL
                );
                CREATE TABLE samples (
                    id INTEGER PRIMARY KEY,
                    batch INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
                    date REAL NOT NULL,
                    timestamp REAL NOT NULL,
                    x REAL NOT NULL,
                    y REAL NOT NULL,
                    z REAL NOT NULL
                );
                CREATE INDEX samples_by_date ON samples(date);
                CREATE INDEX samples_by_batch ON samples(batch);
                """)
            let t = base.timeIntervalSince1970
            try db.execute(sql: "INSERT INTO sessions (source, requested_start, requested_end) VALUES ('sim:walk', ?, ?)", arguments: [t, t + 60])
            try db.execute(sql: "INSERT INTO sessions (source, requested_start, requested_end) VALUES ('iio:iio:device0', ?, ?)", arguments: [t, t + 60])
            try db.execute(sql: "INSERT INTO batches (session) VALUES (1), (2)")
            try db.execute(sql: """
                INSERT INTO samples (batch, date, timestamp, x, y, z) VALUES
                    (1, ?, 100.0, 0.125, -0.5, -1.0),
                    (1, ?, 100.02, 0.25, 0.0, -0.984375),
                    (2, ?, 100.04, 0.0, 1.0, 0.0)
                """, arguments: [t + 1, t + 1.02, t + 1.04])
        }
    }

    /// A v2 file, as the store of schema v2 left it: the v1 file above, then v2's statements (written
    /// out here, not taken from the migrator), with one rotation-rate session of two samples.
    private func makeVersion2Database(at path: String, base: Date) throws {
        try makeVersion1Database(at: path, base: base)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO grdb_migrations (identifier) VALUES ('v2');
                ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'accelerometer';
                CREATE TABLE rotation_rate_samples (
                    id INTEGER PRIMARY KEY,
                    batch INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
                    date REAL NOT NULL,
                    timestamp REAL NOT NULL,
                    x REAL NOT NULL,
                    y REAL NOT NULL,
                    z REAL NOT NULL
                );
                CREATE INDEX rotation_rate_samples_by_date ON rotation_rate_samples(date);
                CREATE INDEX rotation_rate_samples_by_batch ON rotation_rate_samples(batch);
                """)
            let t = base.timeIntervalSince1970
            try db.execute(sql: "INSERT INTO sessions (source, requested_start, requested_end, kind) VALUES ('sim:walk', ?, ?, 'rotationRate')", arguments: [t, t + 60])
            try db.execute(sql: "INSERT INTO batches (session) VALUES (3)")
            try db.execute(sql: """
                INSERT INTO rotation_rate_samples (batch, date, timestamp, x, y, z) VALUES
                    (3, ?, 100.0, 0.5, -0.25, 3.0),
                    (3, ?, 100.02, 0.75, 0.0, -3.0)
                """, arguments: [t + 1, t + 1.02])
        }
    }

    @Test func aVersion2DatabaseOpensKeepsItsSamplesAndTakesPressure() throws {
        let path = temporaryDatabase("v2")
        let base = Date()
        try makeVersion2Database(at: path, base: base)

        let store = try RecordingStore(location: .file(path), now: base)
        let applied = try store.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        #expect(applied == ["v1", "v2", "v3"])
        #expect(try everything(store).map(\.reading.timestamp) == [100, 100.02, 100.04], "the accelerometer's samples are intact")
        let rates = try store.samples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, sensor: .rotationRate)
        #expect(rates.map { [$0.reading.x, $0.reading.y, $0.reading.z] } == [[0.5, -0.25, 3], [0.75, 0, -3]], "rotation rate intact")
        #expect(rates.map(\.identifier) == [3, 3])
        #expect(try store.sessionsWithSampleCounts().map(\.samples) == [2, 1])
        #expect(try store.sessionsWithSampleCounts(sensor: .rotationRate).map(\.samples) == [2])
        #expect(try store.sessions(sensor: .pressure).isEmpty && store.sampleCount(sensor: .pressure) == 0)

        // Pressure goes in beside them: its own session, a later batch, NULL for an unknown temperature.
        let session = try store.beginSession(source: "sim:stairs", start: base, duration: 10, sensor: .pressure)
        let readings = [
            PressureReading(date: base.addingTimeInterval(2), timestamp: 101, pressure: 101.325, temperature: 21.5),
            PressureReading(date: base.addingTimeInterval(3), timestamp: 102, pressure: 101.3, temperature: nil),
            PressureReading(date: base.addingTimeInterval(4), timestamp: 103, pressure: .nan, temperature: 20),
            PressureReading(date: base.addingTimeInterval(5), timestamp: 104, pressure: 101.2, temperature: .infinity),
        ]
        #expect(try store.insert(readings, session: session) == 4)
        let back = try store.pressureSamples(from: Date(timeIntervalSince1970: 0), to: .distantFuture)
        #expect(back.map(\.reading.timestamp) == [101, 102, 104], "NaN pressure is not stored")
        #expect(back.map(\.reading.pressure) == [101.325, 101.3, 101.2])
        #expect(back.map(\.reading.temperature) == [21.5, nil, nil], "unknown or not finite: NULL")
        #expect(back.map(\.identifier) == [4, 4, 4])
        let nulls = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pressure_samples WHERE temperature IS NULL") }
        #expect(nulls == 2)
        #expect(try store.pressureSamples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, source: "sim:walk").isEmpty)
        #expect(try store.sessionsWithSampleCounts(sensor: .pressure).map(\.samples) == [3])
        #expect(throws: RecorderError.self) { try store.insert([reading(1, base: base)], sensor: .pressure) }

        // Retention takes pressure with the rest.
        #expect(try store.deleteSamples(before: base.addingTimeInterval(3.5)) == 3 + 2 + 2)
        #expect(try store.pressureSamples(from: Date(timeIntervalSince1970: 0), to: .distantFuture).map(\.reading.timestamp) == [104])
        let batches = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM batches") }
        #expect(batches == 1, "only the pressure batch still has a sample")
    }

    @Test func aVersion2DatabaseOpenedReadOnlyHasNoPressure() throws {
        let path = temporaryDatabase("v2ro")
        try makeVersion2Database(at: path, base: Date())
        let store = try RecordingStore(readingFrom: path)
        #expect(try store.pressureSamples(from: Date(timeIntervalSince1970: 0), to: .distantFuture).isEmpty)
        #expect(try store.sampleCount(sensor: .pressure) == 0 && store.sessions(sensor: .pressure).isEmpty)
        #expect(try store.samples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, sensor: .rotationRate).count == 2)
        let tables = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'pressure_samples'") }
        #expect(tables.isEmpty, "not migrated: opened read-only")
    }

    @Test func aVersion1DatabaseOpensKeepsItsAccelerometerSamplesAndTakesRotationRate() throws {
        let path = temporaryDatabase("v1")
        let base = Date()
        try makeVersion1Database(at: path, base: base)

        let store = try RecordingStore(location: .file(path), now: base)
        let back = try everything(store)
        #expect(back.map(\.reading) == [
            AccelerometerReading(date: base.addingTimeInterval(1), timestamp: 100, x: 0.125, y: -0.5, z: -1),
            AccelerometerReading(date: base.addingTimeInterval(1.02), timestamp: 100.02, x: 0.25, y: 0, z: -0.984375),
            AccelerometerReading(date: base.addingTimeInterval(1.04), timestamp: 100.04, x: 0, y: 1, z: 0),
        ].map { r in
            // Dates go through unix seconds as REAL, exactly as the store writes them.
            AccelerometerReading(date: Date(timeIntervalSince1970: r.date.timeIntervalSince1970), timestamp: r.timestamp, x: r.x, y: r.y, z: r.z)
        })
        #expect(back.map(\.identifier) == [1, 1, 2])
        #expect(try store.samples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, source: "sim:walk").count == 2)
        #expect(try store.sessions().map(\.source) == ["sim:walk", "iio:iio:device0"], "v1 sessions are the accelerometer's")
        #expect(try store.sessionsWithSampleCounts().map(\.samples) == [2, 1])
        #expect(try store.sessions(sensor: .rotationRate).isEmpty)
        #expect(try store.sampleCount(sensor: .rotationRate) == 0)
        let applied = try store.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        #expect(applied == ["v1", "v2", "v3"])

        // Rotation rate now goes in beside them, with its own session and a later batch identifier.
        let session = try store.beginSession(source: "sim:walk", start: base, duration: 10, sensor: .rotationRate)
        let rotation = reading(2, base: base, x: 0.5, y: -0.25, z: 3)
        let batch = try #require(try store.insert([rotation], session: session, sensor: .rotationRate))
        #expect(batch == 3)
        let rates = try store.samples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, sensor: .rotationRate)
        #expect(rates.map(\.reading.x) == [0.5] && rates.map(\.identifier) == [3])
        #expect(try store.sessions(sensor: .rotationRate).map(\.id) == [session])
        #expect(try store.sessions().count == 2, "the accelerometer's sessions are unchanged")
        #expect(try everything(store).count == 3, "rotation rate is not accelerometer data")
    }

    @Test func aVersion1DatabaseOpenedReadOnlyIsReadAsItIs() throws {
        let path = temporaryDatabase("v1ro")
        let base = Date()
        try makeVersion1Database(at: path, base: base)
        let store = try RecordingStore(readingFrom: path)
        #expect(try everything(store).map(\.reading.timestamp) == [100, 100.02, 100.04])
        #expect(try store.sessionsWithSampleCounts().map(\.samples) == [2, 1])
        #expect(try store.samples(from: Date(timeIntervalSince1970: 0), to: .distantFuture, sensor: .rotationRate).isEmpty)
        #expect(try store.sessions(sensor: .rotationRate).isEmpty)
        let tables = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'rotation_rate_samples'") }
        #expect(tables.isEmpty, "not migrated: opened read-only")
    }

    @Test func retentionDeletesOldRotationRateAndItsEmptyBatches() throws {
        let store = try RecordingStore(location: .inMemory)
        let base = Date(timeIntervalSince1970: 1_800_000_000)
        try store.insert([reading(0, base: base)], sensor: .rotationRate)
        try store.insert([reading(100, base: base)], sensor: .rotationRate)
        try store.insert([reading(50, base: base)])
        #expect(try store.deleteSamples(before: base.addingTimeInterval(60)) == 2)
        #expect(try store.samples(from: base, to: base.addingTimeInterval(200), sensor: .rotationRate).map(\.reading.timestamp) == [100])
        #expect(try store.sampleCount() == 0)
        let batches = try store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM batches") }
        #expect(batches == 1, "only the batch that still has a sample is left")
    }
}

/// Two processes opening one file that needs a migration: the loser's migration fails as SQLite words it
/// ("table … already exists" for v1, "duplicate column name" for v2's ALTER TABLE) and is retried, so the
/// migrator then finds it applied. The v2 wording went unrecognised until a whole-suite run of six
/// recorder processes on a fresh file failed one of them.
@Suite struct MigrationRaceTests {
    @Test func bothSchemaRacesAreRetriedAndOtherErrorsAreNot() {
        #expect(RecordingStore.lostSchemaRace(DatabaseError(resultCode: .SQLITE_ERROR, message: "table sessions already exists")))
        #expect(RecordingStore.lostSchemaRace(DatabaseError(resultCode: .SQLITE_ERROR, message: "duplicate column name: kind")))
        #expect(!RecordingStore.lostSchemaRace(DatabaseError(resultCode: .SQLITE_ERROR, message: "no such table: sessions")))
        #expect(!RecordingStore.lostSchemaRace(DatabaseError(resultCode: .SQLITE_CORRUPT, message: "duplicate column name: kind")))
    }
}
