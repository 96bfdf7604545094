import Foundation
import MotionFusion
import MotionSources

/// Plays back a recording in any format ``RecordingInput`` reads (the project's CSV and JSONL, BROAD,
/// phone exports, zip archives and folders), as a ``SensorSource``: `replay:PATH`.
///
/// The recording's parts are merged by timestamp (``SampleMerge``, reorder window
/// ``SampleMerge/defaultReorderWindow``), so a file of per-sensor blocks plays in time order, exactly
/// the stream `coremotion fuse` fuses. The file is read lazily during playback, in bounded memory; at
/// creation only its head is read, for the sensors and rates. A bad line first delivers every good
/// sample before it (in the merge's order, the same on every run), then one `.failed(SourceError)`
/// naming the file and line, and playback stops.
///
/// Pacing follows ``Clock``: in real time (the default) samples keep their recorded spacing and
/// their timestamps are moved to start 0.25 s after the first demand, so they look live; on the virtual clock they are
/// delivered as fast as possible with their recorded timestamps.
///
/// **Gaps.** In real time, a gap in the recorded time longer than ``maximumGap`` (10 s: a recording
/// paused for hours, a phone asleep) is not slept through: it is compressed to one sample period (of
/// the recording's fastest sensor), the samples after it keep their spacing, and one note per gap
/// goes to ``notice`` (`rec.csv:812: a gap of 7200 s in the recording plays as 0.01 s`). Timestamps
/// too large to be a clock's are rejected by the merge (``SampleMerge/maximumTimestamp``), as
/// `coremotion fuse` rejects them.
///
/// Each sensor runs at its recorded rate: the source reports that rate as both its minimum and its
/// maximum, and consumers that want less decimate. Applying an empty demand stops playback; the
/// next non-empty demand plays the recording again from its start.
///
/// ## Threading
/// ``apply(_:sink:)`` may be called from any thread; events arrive on the source's own thread.
package final class ReplaySource: SensorSource {
    /// How playback is paced.
    package enum Clock: Sendable, Hashable {
        /// Recorded spacing, timestamps moved to start at the moment playback starts.
        case realTime
        /// As fast as possible, recorded timestamps kept.
        case virtual
    }

    /// What the recording holds.
    package let info: SourceInfo
    /// The recording played.
    package let path: String
    private let clock: Clock
    /// The clock real-time playback reads and sleeps on.
    private let sourceClock: any SourceClock
    private let open: @Sendable () throws(RecordingError) -> [any SampleStream]

    private struct State {
        var demand = SensorDemand.none
        var sink: SourceSink?
        var worker: SourceWorker?
    }
    private let state = Locked(State())

    /// In real time, seconds between the first demand and the first sample: consumers that start
    /// together (one per sensor, as `coremotion stream --sensor raw` does) are all registered by then,
    /// so none misses the recording's first samples.
    static let realTimeLead = 0.25

    /// Samples read at creation to find the sensors and their rates.
    static let headSamples = 4000

    /// The longest gap in recorded time played as it is in real time, seconds: 10. Longer gaps are
    /// compressed to one sample period (see the type's notes).
    package static let maximumGap = 10.0

    /// Where notes on playback go (a compressed gap): standard error unless told otherwise.
    package let notice: @Sendable (String) -> Void

    /// Writes one line to standard error.
    package static let standardErrorNotice: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(("note: " + line + "\n").utf8))
    }

    /// Plays the parts that `open` returns, freshly opened for each playback (beyond the file case:
    /// tests and in-memory recordings).
    ///
    /// - Parameters:
    ///   - name: the recording's name, shown in ``info`` and errors.
    ///   - clock: the pacing; default ``Clock/realTime``.
    ///   - notice: where notes on playback go (compressed gaps); default standard error.
    ///   - sourceClock: the clock real-time playback follows; default the real one (`CLOCK_MONOTONIC`),
    ///     a ``ManualClock`` in tests.
    ///   - open: returns the recording's parts, each at its start.
    package init(name: String, clock: Clock = .realTime, notice: @escaping @Sendable (String) -> Void = ReplaySource.standardErrorNotice,
                sourceClock: any SourceClock = MonotonicSourceClock.shared,
                open: @escaping @Sendable () throws(RecordingError) -> [any SampleStream]) throws(SourceError) {
        self.path = name
        self.clock = clock
        self.sourceClock = sourceClock
        self.notice = notice
        self.open = open

        var times: [SensorKind: [Double]] = [:]
        do {
            var merge = SampleMerge(try open())
            var scanned = 0
            while scanned < Self.headSamples, let s = try merge.next() {
                times[s.sample.sensor, default: []].append(s.sample.timestamp)
                scanned += 1
            }
        } catch {
            // A bad line surfaces now only if no sample precedes it, otherwise during playback.
            if times.isEmpty { throw SourceError(error) }
        }
        guard !times.isEmpty else {
            throw SourceError(.malformedInput, "the recording holds no sample", path: name)
        }
        var caps: [SensorKind: SensorCapability] = [:]
        for (sensor, ts) in times {
            let rate = Self.medianRate(ts)
            caps[sensor] = SensorCapability(minimumRate: rate, maximumRate: rate)
        }
        info = SourceInfo(
            identifier: "replay:\(name)",
            name: "Recording \(name)",
            sensors: caps,
            details: [("file", name), ("pacing", clock == .realTime ? "real time" : "as fast as possible")]
        )
    }

    /// The rate in Hz implied by the median spacing of `times`; 100 Hz for a single sample or when it
    /// is not a finite positive rate.
    static func medianRate(_ times: [Double]) -> Double {
        guard times.count > 1 else { return 100 }
        var gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 && $0.isFinite }
        guard !gaps.isEmpty else { return 100 }
        gaps.sort()
        let rate = 1 / gaps[gaps.count / 2]
        return rate.isFinite && rate > 0 ? rate : 100
    }

    /// Starts, re-targets or stops playback. See ``SensorSource/apply(_:sink:)``.
    @discardableResult
    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        var granted: [SensorKind: Double] = [:]
        for sensor in demand.rates.keys {
            guard let cap = info.sensors[sensor] else {
                throw SourceError(.unavailable, "the recording holds no \(sensor.rawValue) samples", path: path)
            }
            granted[sensor] = cap.maximumRate
        }
        let (stale, start) = state.withLock { s -> (SourceWorker?, Bool) in
            s.demand = SensorDemand(rates: granted)
            if demand.isEmpty {
                s.sink = nil
                defer { s.worker = nil }
                return (s.worker, false)
            }
            s.sink = SourceSink(sink)
            return (nil, s.worker == nil)
        }
        stale?.stop()
        if start {
            let worker = SourceWorker(clock: sourceClock) { [self] worker in play(worker) }
            state.withLock { $0.worker = worker }
        }
        return granted
    }

    private func play(_ worker: SourceWorker) {
        var origin: (recorded: Double, local: Double)?
        var previous: Double?
        let period = 1 / (info.sensors.values.map(\.maximumRate).max() ?? 100)
        do {
            var merge = SampleMerge(try open())
            while let recorded = try merge.next() {
                var sample = recorded.sample
                if clock == .realTime {
                    if let p = previous, let o = origin, sample.timestamp - p > Self.maximumGap {
                        let gap = sample.timestamp - p
                        origin = (o.recorded + gap - period, o.local)
                        notice("\(recorded.path):\(recorded.line): a gap of \(SampleMerge.seconds(gap)) s in the recording plays as \(SampleMerge.seconds(period)) s (gaps over \(SampleMerge.seconds(Self.maximumGap)) s are compressed to one sample period)")
                    }
                    previous = sample.timestamp
                    let o = origin ?? (sample.timestamp, sourceClock.now() + Self.realTimeLead)
                    origin = o
                    sample.timestamp = o.local + (sample.timestamp - o.recorded)
                    if !worker.sleep(until: sample.timestamp) { return }
                } else if worker.isStopping {
                    return
                }
                deliver(.sample(sample), from: worker)
            }
        } catch {
            deliver(.failed(SourceError(error)), from: worker)
            return
        }
        deliver(.finished, from: worker)
    }

    private func deliver(_ event: SourceEvent, from worker: SourceWorker) {
        let sink = state.withLock { s -> SourceSink? in
            guard s.worker === worker || s.worker == nil else { return nil }
            if case .sample(let sample) = event, s.demand.rates[sample.sensor] == nil { return nil }
            return s.sink
        }
        sink?.call(event)
    }
}

extension SourceError {
    /// A recording's error as a source failure (``SourceError/Kind/malformedInput``), keeping its file
    /// and line.
    package init(_ error: RecordingError) {
        self.init(.malformedInput, error.message, path: error.path, line: error.line)
    }
}

extension ReplaySource: ConsumerPacedSource {
    /// `true` for ``Clock/virtual``: playback then runs as fast as its consumers take the samples.
    package var isPacedByConsumers: Bool { clock == .virtual }
}
