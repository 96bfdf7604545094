import Foundation
import GRDB

/// The accelerometer and rotation-rate recordings of `CMSensorRecorder` and `coremotion record`: a
/// SQLite database.
///
/// Tables: `sessions` (one row per recording request: source, requested start and end, sensor),
/// `batches` (one row per write transaction, whose identifier the samples share), `samples`
/// (wall-clock unix time, seconds since boot, acceleration x, y, z in g) and `rotation_rate_samples`
/// (the same with rotation rate in rad/s; schema v2, see ``RecordedSensor``). A file database uses
/// SQLite's write-ahead log, so `coremotion recorded` can read while `coremotion record` writes,
/// and waits up to 5 s for a lock held by another process.
///
/// Samples older than ``retention`` (3 days, as Apple keeps them) are deleted when the store opens
/// and every hour while a ``RecordingWriter`` writes.
///
/// ## Threading
/// Every member may be called from any thread; calls are serialised on one SQLite connection.
@usableFromInline
package final class RecordingStore: Sendable {
    /// Where a store keeps its database.
    package enum Location: Sendable, Hashable {
        /// A SQLite file; its folder is created when missing.
        case file(String)
        /// A private in-memory database, gone when the store is released (for tests).
        case inMemory
    }

    /// How long samples are kept: 3 days, in seconds.
    package static let retention: TimeInterval = 3 * 24 * 3600

    /// The database's location.
    package let location: Location

    let database: DatabaseQueue

    /// The file path, or `nil` in memory.
    package var path: String? {
        if case .file(let p) = location { return p }
        return nil
    }

    /// Opens (creating when needed) the database at `location`, creates its tables and deletes
    /// samples older than ``retention`` before `now`.
    ///
    /// - Parameters:
    ///   - location: the file, or ``Location/inMemory``. Default: ``defaultPath(environment:)``.
    ///   - now: the time retention counts back from. Default: the current time.
    /// - Throws: ``RecorderError`` of kind ``RecorderError/Kind/corruptDatabase`` when the file is not
    ///   a SQLite database, ``RecorderError/Kind/unwritable`` when it or its folder cannot be created
    ///   or written.
    package init(location: Location = .file(RecordingStore.defaultPath()), now: Date = Date()) throws(RecorderError) {
        self.location = location
        var config = Configuration()
        config.busyMode = .timeout(5)
        config.label = "MotionRecorderStore"
        let path: String?
        switch location {
        case .file(let p):
            path = p
            config.journalMode = .wal
            let folder = URL(fileURLWithPath: p).deletingLastPathComponent().path
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw RecorderError(.unwritable, "cannot create the folder \(folder)", path: p)
            }
        case .inMemory:
            path = nil
        }
        // Several processes may open a fresh file at once: switching it to WAL and creating the
        // tables then race, and SQLite answers the loser "database is locked" at once, without its
        // busy timeout (a deferred transaction cannot wait for a snapshot that moved). The loser
        // retries after a short random pause, for up to 15 s; the migrator then finds the tables.
        do {
            database = try Self.openAndMigrate(path: path, configuration: config)
        } catch {
            throw Self.recorderError(error, path: path)
        }
        readOnly = false
        _ = try deleteSamples(before: now.addingTimeInterval(-Self.retention))
    }

    /// Opens an existing database only to read it: nothing is created, migrated, deleted or
    /// written, not even SQLite's `-wal` and `-shm` files when the folder is read-only (a database
    /// on read-only media or in another user's folder, a backup). Samples older than ``retention``
    /// are still in such a file; ``samples(from:to:limit:source:)`` returns what is asked.
    ///
    /// - Parameters:
    ///   - path: the SQLite file.
    ///   - schemaWait: how long (s) to wait for the tables of a file that has none yet (a recorder
    ///     creating it). Default ``schemaWait`` (3 s).
    /// - Throws: ``RecorderError`` of kind ``RecorderError/Kind/unwritable`` when the file cannot be
    ///   opened (it does not exist, say), ``RecorderError/Kind/corruptDatabase`` when it is not a
    ///   recordings database.
    package init(readingFrom path: String, schemaWait: TimeInterval = RecordingStore.schemaWait) throws(RecorderError) {
        location = .file(path)
        readOnly = true
        guard FileManager.default.fileExists(atPath: path) else {
            throw RecorderError(.unwritable, "no such database", path: path)
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(5)
        config.label = "MotionRecorderStore (read-only)"
        func open(_ name: String, waitForTables: Bool) throws -> DatabaseQueue {
            let queue = try DatabaseQueue(path: name, configuration: config)
            // A file a recorder is creating this instant has no tables for a moment (concurrent
            // recorders may retry its schema for a while): wait a little for them rather than fail.
            let deadline = Date().addingTimeInterval(waitForTables ? schemaWait : 0)
            // Each look takes a shared lock that the creator must wait out to switch the file to WAL, so
            // the looks thin out (20 ms, growing to 250 ms) to leave it room on a loaded machine.
            var pause: useconds_t = 20_000
            while true {
                let tables: Int
                do {
                    tables = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0 }
                } catch let error as DatabaseError where waitForTables && Date() < deadline
                    && [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_PROTOCOL].contains(error.resultCode) {
                    // The creator holds the file while it writes the schema (and switches it to WAL):
                    // still being created, not unreadable.
                    usleep(pause)
                    pause = min(pause * 3 / 2, 250_000)
                    continue
                }
                if tables > 0 { break }
                guard Date() < deadline else {
                    throw RecorderError(.corruptDatabase, "not a recordings database (it has no tables)", path: path)
                }
                usleep(pause)
                pause = min(pause * 3 / 2, 250_000)
            }
            // The schema is read now, so that a file SQLite cannot read fails here.
            _ = try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sessions") }
            return queue
        }
        do {
            database = try open(path, waitForTables: true)
        } catch let error as RecorderError {
            throw error
        } catch {
            // A WAL database in a folder where its -shm file cannot be created: SQLite reads it
            // only as immutable (nobody is writing there anyway).
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            do {
                database = try open("file:\(encoded)?immutable=1", waitForTables: false)
            } catch {
                throw Self.recorderError(error, path: path)
            }
        }
    }

    /// How long ``init(readingFrom:)`` waits for the tables of a database that has none yet (a
    /// recorder creating it): 3 s.
    static let schemaWait: TimeInterval = 3

    /// `true` for a store opened with ``init(readingFrom:)``.
    package let readOnly: Bool

    /// Opens the database and brings its schema up to date, retrying while another process holds
    /// the lock (see ``init(location:now:)``).
    static func openAndMigrate(path: String?, configuration: Configuration) throws -> DatabaseQueue {
        let deadline = Date().addingTimeInterval(15)
        while true {
            do {
                let queue = try path.map { try DatabaseQueue(path: $0, configuration: configuration) }
                    ?? DatabaseQueue(configuration: configuration)
                try migrator.migrate(queue)
                return queue
            } catch let error as DatabaseError where (isBusy(error) || lostSchemaRace(error)) && Date() < deadline {
                usleep(useconds_t.random(in: 5_000...50_000))
            }
        }
    }

    static func isBusy(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// Two processes found a file without the latest schema; the other one migrated it first, so
    /// this one's migration fails: `CREATE TABLE` with "table … already exists" (v1), `ALTER TABLE …
    /// ADD COLUMN` with "duplicate column name" (v2). Each migration runs in a transaction, so the
    /// failed one left nothing behind; retrying lets the migrator see it recorded as applied.
    static func lostSchemaRace(_ error: DatabaseError) -> Bool {
        let message = error.message ?? ""
        return error.resultCode == .SQLITE_ERROR && (message.contains("already exists") || message.contains("duplicate column name"))
    }

    /// The default database file: `COREMOTION_RECORDER_DATABASE` when set, else
    /// `$XDG_DATA_HOME/coremotion/recordings.sqlite`, else `~/.local/share/coremotion/recordings.sqlite`.
    @usableFromInline package static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let p = environment["COREMOTION_RECORDER_DATABASE"], !p.isEmpty { return p }
        let base: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = home + "/.local/share"
        }
        return base + "/coremotion/recordings.sqlite"
    }

    /// Runs `body` in one write transaction, mapping SQLite errors to ``RecorderError``.
    ///
    /// The transaction is IMMEDIATE: it takes SQLite's write lock when it begins, waiting up to the
    /// busy timeout (5 s) while another process writes, so concurrent writers queue instead of
    /// failing with "database is locked" when a deferred transaction tries to upgrade.
    func write<T>(_ body: (Database) throws -> T) throws(RecorderError) -> T {
        if readOnly { throw RecorderError(.unwritable, "opened read-only", path: path) }
        do {
            return try database.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                guard let result else { throw RecorderError(.database, "transaction ended without a result", path: path) }
                return result
            }
        } catch {
            throw Self.recorderError(error, path: path)
        }
    }

    /// Runs `body` as a read, mapping SQLite errors to ``RecorderError``.
    func read<T>(_ body: (Database) throws -> T) throws(RecorderError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw Self.recorderError(error, path: path)
        }
    }

    static func recorderError(_ error: any Error, path: String?) -> RecorderError {
        if let e = error as? RecorderError { return e }
        guard let db = error as? DatabaseError else {
            return RecorderError(.database, String(describing: error), path: path)
        }
        let message = db.message ?? "SQLite error \(db.resultCode.rawValue)"
        switch db.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return RecorderError(.corruptDatabase, "not a usable recordings database (\(message)); move it away to start a new one", path: path)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return RecorderError(.database, "database is locked by another process for more than 5 s (\(message))", path: path)
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_AUTH:
            return RecorderError(.unwritable, "cannot be opened or written (\(message))", path: path)
        default:
            return RecorderError(.database, message, path: path)
        }
    }
}
