import GRDB

extension RecordingStore {
    /// The schema, one migration per version. Times are unix seconds (wall clock) or seconds since
    /// boot, accelerations in g.
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
        return migrator
    }
}
