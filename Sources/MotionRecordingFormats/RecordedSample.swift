import MotionSources

/// One sample read from a recording, already in Core Motion's units and signs (g with gravity
/// pointing down, rad/s, µT; see ``RawSample``), with where it was read.
///
/// ``RawSample/timestamp`` is in seconds on the recording's own clock (for the project's own files,
/// seconds since boot of the machine that recorded; for phone exports, the per-format time base
/// documented by each reader). Readers never reorder: they yield samples in the order the file holds
/// them, and the merge (``SampleStream`` consumers) puts them in time order.
package struct RecordedSample: Sendable, Hashable {
    /// The reading.
    package var sample: RawSample
    /// The file or archive entry it was read from, as shown in errors.
    package var path: String
    /// The 1-based line (or record) of ``path`` it was read from.
    package var line: Int

    /// Creates a recorded sample.
    @inlinable
    package init(sample: RawSample, path: String, line: Int) {
        self.sample = sample
        self.path = path
        self.line = line
    }
}

/// A stream of samples read from one part of a recording (one file, or one archive entry), in the
/// order that part holds them.
///
/// A part usually holds its samples in time order, but need not: `coremotion stream` writes blocks
/// per sensor, and phone apps buffer. Readers yield samples as they read them; the merge that feeds
/// fusion and replay orders them by timestamp within a documented reorder window.
///
/// Streams read lazily in bounded memory: ``next()`` parses as much input as one sample needs.
package protocol SampleStream {
    /// The next sample, or `nil` at the end of the part.
    /// - Throws: ``RecordingError`` naming the file and line of input that cannot be read, after
    ///   every good sample before it has been returned.
    mutating func next() throws(RecordingError) -> RecordedSample?
}
