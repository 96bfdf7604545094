import GRDB

extension RecordingStore {
    /// The schema, one migration per version. Times are unix seconds (wall clock) or seconds since
    /// boot, accelerations in g, rotation rates in rad/s.
    ///
    /// - v1: `sessions`, `batches` and the accelerometer's `samples`.
    /// - v2: `rotation_rate_samples` (the same columns as `samples`, x, y, z in rad/s) and the column
    ///   `sessions.kind` (``RecordedSensor`` raw value; every v1 session is `accelerometer`). A v1
    ///   file is migrated when a writable store opens it; its samples stay as they are.
    /// - v3: `pressure_samples` (`pressure` in kPa; `temperature` in °C, NULL when the barometer does
    ///   not report it), for ``RecordedSensor/pressure``. A v1 or v2 file is migrated in the same way.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
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
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
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
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE pressure_samples (
                    id INTEGER PRIMARY KEY,
                    batch INTEGER NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
                    date REAL NOT NULL,
                    timestamp REAL NOT NULL,
                    pressure REAL NOT NULL,
                    temperature REAL
                );
                CREATE INDEX pressure_samples_by_date ON pressure_samples(date);
                CREATE INDEX pressure_samples_by_batch ON pressure_samples(batch);
                """)
        }
        return migrator
    }
}

/// The sensors a ``RecordingStore`` keeps samples of, each in its own table.
package enum RecordedSensor: String, Sendable, Hashable, CaseIterable {
    /// Acceleration in g (table `samples`, schema v1).
    case accelerometer
    /// Rotation rate in rad/s, device frame, as the gyroscope reports it (table
    /// `rotation_rate_samples`, schema v2).
    case rotationRate
    /// Air pressure in kPa with the sensor's temperature in °C when known (table `pressure_samples`,
    /// schema v3), read from a barometer; ``PressureReading``, not ``AccelerometerReading``.
    case pressure

    /// The table of this sensor's samples.
    var table: String {
        switch self {
        case .accelerometer: "samples"
        case .rotationRate: "rotation_rate_samples"
        case .pressure: "pressure_samples"
        }
    }

    /// `true` for the sensors stored as x, y, z (``AccelerometerReading``).
    package var isVector: Bool { self != .pressure }
}

extension RecordingStore {
    /// `true` when the database has the v2 schema. A writable store always has it (it migrates on
    /// opening); a v1 file opened with ``init(readingFrom:)`` does not, and then holds only
    /// accelerometer sessions and samples.
    static func hasVersion2(_ db: Database) throws -> Bool {
        try db.tableExists(RecordedSensor.rotationRate.table)
    }

    /// `true` when the database has the table of `sensor`: always for a writable store; a v1 or v2
    /// file opened with ``init(readingFrom:)`` lacks the tables of later versions (and so holds no
    /// samples of them).
    static func hasTable(of sensor: RecordedSensor, _ db: Database) throws -> Bool {
        try db.tableExists(sensor.table)
    }
}
