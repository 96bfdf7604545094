#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import MotionSources
import OpenCoreMotion

/// One sensor stream from any source through a `CMMotionManager` for a long time (`coremotion bench
/// soak`): lost samples, and CPU and memory per window, whose flatness is the goal.
///
/// The source's own samples are counted as they leave it (``CountingSource``), so lost = emitted −
/// delivered. Memory is the resident set size from `/proc/self/statm`, sampled every second; growth is
/// the last sample minus the sample at the end of the warm-up (a quarter of the run, at most 60 s).
/// CPU is this process's user and system time (`getrusage`) per window.
package enum SoakBenchmark {
    /// What is streamed.
    package enum Stream: String, CaseIterable, Sendable {
        case deviceMotion = "device-motion", accelerometer, gyro, magnetometer
    }

    /// One reporting window.
    package struct Window: Codable, Equatable, Sendable {
        /// Seconds since the start at the window's end.
        package var end_s: Double
        /// Updates delivered in the window.
        package var delivered: Int
        /// CPU seconds (user + system) this process spent in the window.
        package var cpu_s: Double
        /// Resident set size at the window's end, kB.
        package var rss_kb: Int

        /// A window.
        package init(end_s: Double, delivered: Int, cpu_s: Double, rss_kb: Int) {
            self.end_s = end_s; self.delivered = delivered; self.cpu_s = cpu_s; self.rss_kb = rss_kb
        }
    }

    /// What one run measured (the JSON of `bench soak --json`).
    package struct Result: Codable, Sendable {
        package var source: String
        package var sensor: String
        package var rate_hz: Double
        package var seconds: Double
        package var warmup_seconds: Double
        package var expected: Int
        package var delivered: Int
        package var lost: Int
        package var out_of_order: Int
        package var rss_kb: RSS
        package var growth_kb: Int
        package var windows: [Window]
        /// CPU of the last full window over the first full window after the warm-up; `nil` with fewer than two.
        package var cpu_ratio: Double?
        /// The source's or delivery's first error, if any (the run stops there).
        package var error: String?
        /// Resident set sizes, kB.
        package struct RSS: Codable, Sendable { package var start: Int; package var after_warmup: Int; package var end: Int; package var max: Int }

        /// Whether the goal is met (``SoakBenchmark/meetsGoal(lost:outOfOrder:growthKilobytes:cpuGrew:)``).
        package var meetsGoal: Bool { SoakBenchmark.meetsGoal(lost: lost, outOfOrder: out_of_order, growthKilobytes: growth_kb, cpuGrew: cpuGrew) }

        /// Whether the CPU grew beyond the goal (``SoakBenchmark/cpuGrew(_:warmup:window:)``; not encoded).
        var cpuGrew = false

        enum CodingKeys: String, CodingKey {
            case source, sensor, rate_hz, seconds, warmup_seconds, expected, delivered, lost, out_of_order, rss_kb, growth_kb, windows, cpu_ratio, error
        }
    }

    /// The resident set size in kB (`/proc/self/statm`, second field, in pages); 0 where unreadable.
    package static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// User plus system CPU time of this process, in seconds.
    package static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU ratio of the goal: the last full window over the first full one ending after `warmup`,
    /// and the difference of their CPU seconds; `nil` with fewer than two such windows.
    package static func cpuRatio(_ windows: [Window], warmup: Double, window: Double) -> (ratio: Double, excess: Double)? {
        let full = windows.filter { $0.end_s > warmup + window * 0.999 }
        guard full.count >= 2, let first = full.first, let last = full.last else { return nil }
        return (first.cpu_s > 0 ? last.cpu_s / first.cpu_s : (last.cpu_s > 0 ? .infinity : 1), last.cpu_s - first.cpu_s)
    }

    /// Whether the CPU of the last full window after `warmup` exceeds twice that of the first and by
    /// more than 0.5 % of a core (`window` seconds long); `false` with fewer than two full windows.
    package static func cpuGrew(_ windows: [Window], warmup: Double, window: Double) -> Bool {
        guard let cpu = cpuRatio(windows, warmup: warmup, window: window) else { return false }
        return cpu.ratio > 2 && cpu.excess > 0.005 * window
    }

    /// The soak's goal: nothing lost or reordered, under 1 MB (1024 kB) of resident growth after the
    /// warm-up, and no CPU growth (``cpuGrew(_:warmup:window:)``).
    package static func meetsGoal(lost: Int, outOfOrder: Int, growthKilobytes: Int, cpuGrew: Bool) -> Bool {
        lost == 0 && outOfOrder == 0 && growthKilobytes < 1024 && !cpuGrew
    }

    /// Streams `stream` from `source` (named `spec` in the result) at `rate` Hz for `seconds`, in
    /// windows of `window` seconds, through a `CMMotionManager` with a handler on a serial queue.
    /// - Throws: ``BenchmarkFailure`` when the source lacks the sensor.
    package static func run(source: any SensorSource, spec: String, stream: Stream, rate: Double, seconds: Double,
                            window: Double) async throws -> Result {
        let counting = CountingSource(source, deliveryInterval: 1 / rate)
        let manager = CMMotionManager(source: counting)
        let tally = Locked(DeliveryTally())
        let failure = Locked<String?>(nil)
        let cutoff = Locked(Double.infinity)
        let queue = OperationQueue.serial()
        let rssStart = residentKilobytes()
        let record: @Sendable (Double?, (any Error)?) -> Void = { timestamp, error in
            if let error { failure.withLock { $0 = $0 ?? String(describing: error) } }
            guard let timestamp else { return }
            let limit = cutoff.withLock { $0 }
            tally.withLock { $0.record(timestamp: timestamp, now: 0, cutoff: limit, recordLatency: false) }
        }
        let interval = 1 / rate
        let emittedKind: SensorKind?
        switch stream {
        case .deviceMotion:
            guard manager.isDeviceMotionAvailable else { throw BenchmarkFailure("\(spec) has no device motion (it needs an accelerometer and a gyroscope): pass --sensor accelerometer") }
            manager.deviceMotionUpdateInterval = interval
            manager.startDeviceMotionUpdates(to: queue) { m, e in record(m?.timestamp, e) }
            emittedKind = nil
        case .accelerometer:
            guard manager.isAccelerometerAvailable else { throw BenchmarkFailure("\(spec) has no accelerometer") }
            manager.accelerometerUpdateInterval = interval
            manager.startAccelerometerUpdates(to: queue) { d, e in record(d?.timestamp, e) }
            emittedKind = .accelerometer
        case .gyro:
            guard manager.isGyroAvailable else { throw BenchmarkFailure("\(spec) has no gyroscope") }
            manager.gyroUpdateInterval = interval
            manager.startGyroUpdates(to: queue) { d, e in record(d?.timestamp, e) }
            emittedKind = .gyro
        case .magnetometer:
            guard manager.isMagnetometerAvailable else { throw BenchmarkFailure("\(spec) has no magnetometer") }
            manager.magnetometerUpdateInterval = interval
            manager.startMagnetometerUpdates(to: queue) { d, e in record(d?.timestamp, e) }
            emittedKind = .magnetometer
        }
        let warmup = min(60, seconds / 4)
        let started = ProcessInfo.processInfo.systemUptime
        var rssAfterWarmup: Int?
        var rssMax = rssStart
        var rssEnd = rssStart
        var windows: [Window] = []
        var windowStart = (cpu: cpuSeconds(), delivered: 0)
        var nextWindow = window
        while failure.withLock({ $0 }) == nil {
            let elapsed = ProcessInfo.processInfo.systemUptime - started
            if elapsed >= seconds { break }
            try await Task.sleep(nanoseconds: UInt64(min(1, seconds - elapsed, max(0.001, nextWindow - elapsed)) * 1e9))
            let now = ProcessInfo.processInfo.systemUptime - started
            let rss = residentKilobytes()
            rssMax = max(rssMax, rss)
            rssEnd = rss
            if rssAfterWarmup == nil, now >= warmup { rssAfterWarmup = rss }
            if now >= nextWindow - 0.0005 {
                let cpu = cpuSeconds(), delivered = tally.withLock { $0.delivered }
                windows.append(Window(end_s: (now * 1000).rounded() / 1000, delivered: delivered - windowStart.delivered,
                                      cpu_s: ((cpu - windowStart.cpu) * 1000).rounded() / 1000, rss_kb: rss))
                windowStart = (cpu, delivered)
                nextWindow += window
            }
        }
        let end = MonotonicClock.now()
        cutoff.withLock { $0 = end }
        counting.setCutoff(end)
        let error = failure.withLock { $0 }
        if error == nil { try await tally.waitForDrain() }
        switch stream {
        case .deviceMotion: manager.stopDeviceMotionUpdates()
        case .accelerometer: manager.stopAccelerometerUpdates()
        case .gyro: manager.stopGyroUpdates()
        case .magnetometer: manager.stopMagnetometerUpdates()
        }
        let after = rssAfterWarmup ?? rssStart
        let expected = emittedKind.map { counting.expected($0) } ?? counting.expectedDeviceMotionUpdates
        let cpu = cpuRatio(windows, warmup: warmup, window: window)
        return tally.withLock { tally in
            var result = Result(source: spec, sensor: stream.rawValue, rate_hz: rate, seconds: seconds, warmup_seconds: warmup, expected: expected,
                                delivered: tally.delivered, lost: max(0, expected - tally.delivered), out_of_order: tally.outOfOrder,
                                rss_kb: .init(start: rssStart, after_warmup: after, end: rssEnd, max: rssMax), growth_kb: rssEnd - after,
                                windows: windows, cpu_ratio: cpu.map { ($0.ratio * 1000).rounded() / 1000 }, error: error)
            result.cpuGrew = cpuGrew(windows, warmup: warmup, window: window)
            return result
        }
    }
}
