/// Why the recording store could not do what was asked.
///
/// Its ``description`` is one line naming the database file and the cause, suitable for a
/// command-line error or a log entry.
package struct RecorderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad kind of failure.
    package enum Kind: String, Sendable, Hashable {
        /// The file exists but is not a usable SQLite database (corrupt, truncated, another format).
        case corruptDatabase
        /// The file or its folder cannot be created, opened or written (permissions, read-only disk, full disk).
        case unwritable
        /// A request that makes no sense, such as a date range that ends before it starts.
        case invalidRequest
        /// Any other SQLite failure.
        case database
    }

    /// The broad kind of failure.
    package var kind: Kind
    /// One line saying what went wrong.
    package var message: String
    /// The database file involved; `nil` for an in-memory database.
    package var path: String?

    /// Creates an error.
    package init(_ kind: Kind, _ message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

    /// `path: message`, or just the message for an in-memory database.
    package var description: String {
        path.map { "\($0): \(message)" } ?? message
    }
}
