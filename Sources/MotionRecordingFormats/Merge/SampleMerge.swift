import MotionSources

/// The samples of several ``SampleStream``s (the parts of one recording) in time order: a k-way
/// merge with a bounded reorder window.
///
/// ## Order
/// Samples come out by timestamp. Samples with equal timestamps come out accelerometer, gyroscope,
/// magnetometer (`SensorKind`'s order, which the simulator and most drivers use: the fused update at a
/// gyroscope sample sees the accelerometer sample of its instant; see MotionFusion's `FusionDriver`),
/// and otherwise in the order they were read.
///
/// ## Reorder window
/// A part need not be in time order: `coremotion stream` writes blocks of about 0.1 s per sensor, and
/// phone apps buffer. Within one part a sample may be up to ``reorderWindow`` seconds older than the
/// newest sample read before it from that part; the merge holds samples back until no part can still
/// yield an earlier one. A sample older than that is a ``RecordingError`` naming its file and line,
/// never a silent reorder.
///
/// ## Timestamps
/// A timestamp must be at most ``maximumTimestamp`` in size: beyond it a sample is a
/// ``RecordingError`` naming its file and line. This is the one check that `coremotion fuse`, a
/// real-time `replay:` and every other reader of a recording share, so what one rejects the others do.
///
/// ## Memory
/// The merge holds the samples of about ``reorderWindow`` seconds of recording (plus what parts that
/// start later hold back), whatever the recording's length: a binary heap, O(log n) per sample.
///
/// ## Errors
/// When a part fails (a malformed line), the merge first returns every sample it has already read, in
/// time order, then throws that part's error: so every good sample before the bad line is delivered,
/// the same ones on every run.
package struct SampleMerge: SampleStream {
    /// The default reorder window, seconds: 1 s, ten times the 0.1 s blocks `coremotion stream` writes.
    package static let defaultReorderWindow = 1.0

    /// How much older than the newest sample of its part a sample may be, seconds.
    package let reorderWindow: Double

    /// The largest timestamp a recording may hold, in size: 10¹⁰ s (about 317 years). Every clock a
    /// recording is on (seconds since boot, since 1970, since its start) is far inside it; a larger
    /// value (`1e308`) is a damaged row, which a real-time replay would otherwise wait for forever.
    package static let maximumTimestamp = 1e10

    /// Why `t` cannot be a recording's timestamp, or `nil` when it can (``maximumTimestamp``).
    package static func timestampProblem(_ t: Double) -> String? {
        guard !(abs(t) <= maximumTimestamp) else { return nil }
        return "timestamp \(seconds(t)) is out of range: a recording's timestamps are seconds, at most 10¹⁰ in size"
    }

    private struct Part {
        var stream: any SampleStream
        /// The newest timestamp read from this part; −∞ before the first, +∞ once it has ended.
        var newest = -Double.infinity
        var newestLine = 0
        var ended = false
        /// Index in `paths` of this part's latest path.
        var pathIndex = -1
    }

    /// A sample held back: plain values only (the path is an index into `paths`), so that moving it
    /// in the heap costs no reference counting.
    private struct Pending {
        var sample: RawSample
        var line: Int
        var path: Int
        var rank: Int
        var sequence: Int

        @inline(__always)
        func precedes(_ o: Pending) -> Bool {
            let a = sample.timestamp, b = o.sample.timestamp
            if a != b { return a < b }
            if rank != o.rank { return rank < o.rank }
            return sequence < o.sequence
        }
    }

    private var parts: [Part]
    private var heap: [Pending] = []
    /// The distinct paths of the samples read.
    private var paths: [String] = []
    /// Samples read and not yet returned (for tests of the bounded memory).
    var pendingCount: Int { heap.count }
    private var sequence = 0
    private var failure: RecordingError?
    private var returned = (accelerometer: 0, gyro: 0, magnetometer: 0, pressure: 0)

    /// How many samples of `sensor` the merge has returned so far.
    package func count(of sensor: SensorKind) -> Int {
        switch sensor {
        case .accelerometer: returned.accelerometer
        case .gyro: returned.gyro
        case .magnetometer: returned.magnetometer
        case .pressure: returned.pressure
        }
    }

    /// Merges `streams`.
    /// - Parameters:
    ///   - streams: the parts of a recording, each in the order it holds its samples.
    ///   - reorderWindow: seconds, ≥ 0 (NaN and negative values mean 0); default ``defaultReorderWindow``.
    package init(_ streams: [any SampleStream], reorderWindow: Double = SampleMerge.defaultReorderWindow) {
        parts = streams.map { Part(stream: $0) }
        self.reorderWindow = reorderWindow.isNaN ? 0 : max(0, reorderWindow)
        heap.reserveCapacity(1024)
    }

    /// The rank of a sensor among samples with equal timestamps.
    @inline(__always)
    static func rank(_ s: SensorKind) -> Int {
        switch s {
        case .accelerometer: 0
        case .gyro: 1
        case .magnetometer: 2
        case .pressure: 3
        }
    }

    /// The next sample in time order, or `nil` when every part has ended.
    /// - Throws: the first part's ``RecordingError``, or one for a sample beyond the reorder window,
    ///   after every sample read before it has been returned.
    package mutating func next() throws(RecordingError) -> RecordedSample? {
        while true {
            if let top = heap.first {
                if failure != nil || top.sample.timestamp < watermark {
                    return take()
                }
            } else if let failure {
                self.failure = nil
                parts.removeAll()
                throw failure
            }
            // Read from the part holding the watermark back.
            guard let i = laggingPart() else {
                // Every part has ended: drain.
                guard !heap.isEmpty else { return nil }
                return take()
            }
            read(from: i)
        }
    }

    private mutating func take() -> RecordedSample {
        let p = popMin()
        switch p.sample.sensor {
        case .accelerometer: returned.accelerometer += 1
        case .gyro: returned.gyro += 1
        case .magnetometer: returned.magnetometer += 1
        case .pressure: returned.pressure += 1
        }
        return RecordedSample(sample: p.sample, path: paths[p.path], line: p.line)
    }

    /// Samples older than this can no longer be preceded by a sample still unread.
    private var watermark: Double {
        var w = Double.infinity
        for p in parts where !p.ended { w = min(w, p.newest - reorderWindow) }
        return w
    }

    private func laggingPart() -> Int? {
        var best: Int?
        for i in parts.indices where !parts[i].ended {
            if best == nil || parts[i].newest < parts[best!].newest { best = i }
        }
        return best
    }

    private mutating func read(from i: Int) {
        let next: RecordedSample?
        do {
            next = try parts[i].stream.next()
        } catch {
            failure = error
            return
        }
        guard let s = next else {
            parts[i].ended = true
            return
        }
        let t = s.sample.timestamp
        if let problem = Self.timestampProblem(t) {
            failure = RecordingError(problem, path: s.path, line: s.line)
            return
        }
        if t < parts[i].newest - reorderWindow {
            failure = RecordingError(
                "timestamp \(Self.seconds(t)) is \(Self.seconds(parts[i].newest - t)) s before \(Self.seconds(parts[i].newest)) (line \(parts[i].newestLine)), "
                    + "more than the merge's reorder window of \(Self.seconds(reorderWindow)) s",
                path: s.path, line: s.line)
            return
        }
        if t > parts[i].newest {
            parts[i].newest = t
            parts[i].newestLine = s.line
        }
        // Usually the part's previous path (the same string storage, so comparing is cheap).
        if parts[i].pathIndex < 0 || paths[parts[i].pathIndex] != s.path {
            if let known = paths.firstIndex(of: s.path) {
                parts[i].pathIndex = known
            } else {
                paths.append(s.path)
                parts[i].pathIndex = paths.count - 1
            }
        }
        push(Pending(sample: s.sample, line: s.line, path: parts[i].pathIndex, rank: Self.rank(s.sample.sensor), sequence: sequence))
        sequence += 1
    }

    /// A time for messages: up to 6 decimals, no trailing zeros.
    static func seconds(_ d: Double) -> String {
        NumberFormatting.string(d, maximumDecimals: 6)
    }

    // MARK: Binary heap

    private mutating func push(_ p: Pending) {
        heap.append(p)
        var c = heap.count - 1
        while c > 0 {
            let parent = (c - 1) / 2
            guard heap[c].precedes(heap[parent]) else { break }
            heap.swapAt(c, parent)
            c = parent
        }
    }

    private mutating func popMin() -> Pending {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            let n = heap.count
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < n, heap[l].precedes(heap[m]) { m = l }
                if r < n, heap[r].precedes(heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
