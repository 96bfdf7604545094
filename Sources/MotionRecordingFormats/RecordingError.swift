/// A recording that cannot be read: what is wrong, and where.
///
/// `description` is `path:line: message` with the parts that are known, the form the CLI prints on
/// stderr and ``CMErrorDomain`` errors carry (`NSFilePathErrorKey`, `CMErrorLineNumberKey`).
package struct RecordingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line saying what is wrong and, where there is one, how to fix it.
    package var message: String
    /// The file, or the entry inside an archive (`export.zip/Accelerometer.csv`), when known.
    package var path: String?
    /// The 1-based line (or record) of ``path``, when known.
    package var line: Int?

    /// Creates an error.
    package init(_ message: String, path: String? = nil, line: Int? = nil) {
        self.message = message
        self.path = path
        self.line = line
    }

    /// `path:line: message`, with the parts that are known.
    package var description: String {
        var prefix = ""
        if let path { prefix += path + ":" }
        if let line { prefix += "\(line):" }
        return prefix.isEmpty ? message : prefix + " " + message
    }
}
