import Foundation
import MotionFusion

/// Plays back a recording written by `coremotion stream` (see ``ReplayFormat``).
///
/// The file is read once, at creation; rows are parsed and checked as they are played, so a bad row
/// half-way through a file first delivers every good row before it, then reports one
/// `.failed(SourceError)` naming the line, and stops.
///
/// Pacing follows ``Clock``: in real time (the default) samples keep their recorded spacing and
/// their timestamps are moved to start now, so they look live; on the virtual clock they are
/// delivered as fast as possible with their recorded timestamps.
///
/// Each sensor runs at its recorded rate: the source reports that rate as both its minimum and its
/// maximum, and consumers that want less decimate. Applying an empty demand stops playback; the
/// next non-empty demand plays the file again from its start.
///
/// ## Threading
/// ``apply(_:sink:)`` may be called from any thread; events arrive on the source's own thread.
public final class ReplaySource: SensorSource {
    /// How playback is paced.
    public enum Clock: Sendable, Hashable {
        /// Recorded spacing, timestamps moved to start at the moment playback starts.
        case realTime
        /// As fast as possible, recorded timestamps kept.
        case virtual
    }

    /// What the recording holds.
    public let info: SourceInfo
    /// The file played.
    public let path: String
    private let lines: [Substring]
    private let clock: Clock

    private struct State {
        var demand = SensorDemand.none
        var sink: (@Sendable (SourceEvent) -> Void)?
        var worker: SourceWorker?
    }
    private let state = Locked(State())

    /// Opens a recording.
    ///
    /// - Parameters:
    ///   - path: the CSV file.
    ///   - clock: the pacing; default ``Clock/realTime``.
    /// - Throws: ``SourceError`` when the file cannot be read, its header is not a recording's, or it
    ///   holds no sample before its first bad row.
    public init(path: String, clock: Clock = .realTime) throws(SourceError) {
        self.path = path
        self.clock = clock
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw SourceError(.unavailable, "replay file \(reason)", path: path)
        }
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)

        // Scan the head of the file for its sensors and rates; a bad row there surfaces now only if
        // no sample precedes it, otherwise during playback, after the good rows.
        var parser = ReplayFormat.Parser(path: path)
        var times: [SensorKind: [Double]] = [:]
        var scanned = 0
        for (i, line) in lines.enumerated() where scanned < 4000 {
            let sample: RawSample?
            do {
                sample = try parser.parse(line: line, number: i + 1)
            } catch {
                if times.isEmpty { throw error }
                break
            }
            if let sample {
                times[sample.sensor, default: []].append(sample.timestamp)
                scanned += 1
            }
        }
        guard !times.isEmpty else {
            throw SourceError(.malformedInput, "the recording holds no sample", path: path)
        }
        var caps: [SensorKind: SensorCapability] = [:]
        for (sensor, ts) in times {
            let rate = Self.medianRate(ts)
            caps[sensor] = SensorCapability(minimumRate: rate, maximumRate: rate)
        }
        info = SourceInfo(
            identifier: "replay:\(path)",
            name: "Recording \(path)",
            sensors: caps,
            details: [("file", path), ("pacing", clock == .realTime ? "real time" : "as fast as possible")]
        )
    }

    /// The rate in Hz implied by the median spacing of `times`; 100 Hz for a single sample.
    static func medianRate(_ times: [Double]) -> Double {
        guard times.count > 1 else { return 100 }
        var gaps = zip(times.dropFirst(), times).map { $0 - $1 }.filter { $0 > 0 }
        guard !gaps.isEmpty else { return 100 }
        gaps.sort()
        return 1 / gaps[gaps.count / 2]
    }

    /// Starts, re-targets or stops playback. See ``SensorSource/apply(_:sink:)``.
    @discardableResult
    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
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
            s.sink = sink
            return (nil, s.worker == nil)
        }
        stale?.stop()
        if start {
            let worker = SourceWorker { [self] worker in play(worker) }
            state.withLock { $0.worker = worker }
        }
        return granted
    }

    private func play(_ worker: SourceWorker) {
        var parser = ReplayFormat.Parser(path: path)
        var origin: (recorded: Double, local: Double)?
        for (i, line) in lines.enumerated() {
            let sample: RawSample?
            do {
                sample = try parser.parse(line: line, number: i + 1)
            } catch {
                deliver(.failed(error), from: worker)
                return
            }
            guard var sample else { continue }
            if clock == .realTime {
                let o = origin ?? (sample.timestamp, MonotonicClock.now())
                origin = o
                sample.timestamp = o.local + (sample.timestamp - o.recorded)
                if !worker.sleep(until: sample.timestamp) { return }
            } else if worker.isStopping {
                return
            }
            deliver(.sample(sample), from: worker)
        }
        deliver(.finished, from: worker)
    }

    private func deliver(_ event: SourceEvent, from worker: SourceWorker) {
        let sink = state.withLock { s -> (@Sendable (SourceEvent) -> Void)? in
            guard s.worker === worker || s.worker == nil else { return nil }
            if case .sample(let sample) = event, s.demand.rates[sample.sensor] == nil { return nil }
            return s.sink
        }
        sink?(event)
    }
}
