import ArgumentParser
import Foundation
import MotionSources
import OpenCoreMotion

/// `coremotion bench soak`: one sensor stream from any source through a `CMMotionManager` for a long
/// time; lost samples, and CPU and memory per window, whose flatness is the goal.
struct BenchSoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Stream one sensor from a source through a CMMotionManager for a long time; report lost samples, and CPU and memory per window.",
        discussion: """
            The default is device motion from the simulator (real-time clock); --source takes any source (iio, \
            evdev, a phone, mqtt://…), whose own samples are counted as they leave it, so lost = emitted − delivered \
            (ask for the source's own rate: a manager slower than its source drops what falls between updates). \
            Memory is the resident set size from /proc/self/statm, sampled every second; growth is the last sample \
            minus the sample at the end of the warm-up (a quarter of the run, at most 60 s). CPU is this process's \
            user and system time (getrusage) per window. Goal: 0 lost, under 1 MB (1024 kB) growth, and the CPU \
            of the last full window at most twice that of the first after the warm-up (+0.5 % of a core); exit \
            status 1 when one is missed, and when the source fails (one line on stderr; the report is printed first).
            """
    )

    @OptionGroup var source: SourceOptions

    enum Sensor: String, ExpressibleByArgument, CaseIterable {
        case deviceMotion = "device-motion", accelerometer, gyro, magnetometer
    }

    @Option(help: "What to stream: device-motion (default), accelerometer, gyro or magnetometer.")
    var sensor: Sensor = .deviceMotion

    @Option(parsing: .unconditional, help: "Update rate in Hz (at most 1000).", transform: OptionValue.hertz(maximum: 1000))
    var rate: Double = 1000

    @Option(parsing: .unconditional, help: "How long to run, in seconds (4…86400).", transform: OptionValue.seconds(4...86400))
    var seconds: Double = 3600

    @Option(parsing: .unconditional, help: "Length of a reporting window, in seconds (1…3600; default 60).", transform: OptionValue.seconds(1...3600))
    var window: Double = 60

    @Flag(help: "Print JSON: source, sensor, rate_hz, seconds, warmup_seconds, expected, delivered, lost, out_of_order, rss_kb {start, after_warmup, end, max}, growth_kb, windows [{end_s, delivered, cpu_s, rss_kb}], cpu_ratio, error.")
    var json = false

    struct Window: Codable, Equatable {
        /// Seconds since the start at the window's end.
        var end_s: Double
        var delivered: Int
        /// CPU seconds (user + system) this process spent in the window.
        var cpu_s: Double
        var rss_kb: Int
    }

    struct Result: Codable {
        var source: String
        var sensor: String
        var rate_hz: Double
        var seconds: Double
        var warmup_seconds: Double
        var expected: Int
        var delivered: Int
        var lost: Int
        var out_of_order: Int
        var rss_kb: RSS
        var growth_kb: Int
        var windows: [Window]
        /// CPU of the last full window over the first full window after the warm-up; `nil` with fewer than two.
        var cpu_ratio: Double?
        var error: String?
        struct RSS: Codable { var start: Int; var after_warmup: Int; var end: Int; var max: Int }
    }

    /// The resident set size in kB (`/proc/self/statm`, second field, in pages); 0 where unreadable.
    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// User plus system CPU time of this process, in seconds.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The CPU ratio of the soak's goal: the last full window over the first full one ending after
    /// `warmup`; `nil` with fewer than two such windows.
    static func cpuRatio(_ windows: [Window], warmup: Double, window: Double) -> (ratio: Double, excess: Double)? {
        let full = windows.filter { $0.end_s > warmup + window * 0.999 }
        guard full.count >= 2, let first = full.first, let last = full.last else { return nil }
        return (first.cpu_s > 0 ? last.cpu_s / first.cpu_s : (last.cpu_s > 0 ? .infinity : 1), last.cpu_s - first.cpu_s)
    }

    func run() async throws {
        let spec = source.spec(default: "sim:handheld") ?? "sim:handheld"
        let counting = CountingSource(try source.resolve(defaultSpec: "sim:handheld"))
        let manager = CMMotionManager(source: counting)
        let tally = Locked(DeliveryTally())
        let failure = Locked<String?>(nil)
        let cutoff = Locked(Double.infinity)
        let queue = OperationQueue.serial()
        let rssStart = Self.residentKilobytes()
        let record: @Sendable (Double?, (any Error)?) -> Void = { timestamp, error in
            if let error { failure.withLock { $0 = $0 ?? String(describing: error) } }
            guard let timestamp else { return }
            let limit = cutoff.withLock { $0 }
            tally.withLock { $0.record(timestamp: timestamp, now: 0, cutoff: limit, recordLatency: false) }
        }
        let interval = 1 / rate
        let emittedKind: SensorKind?
        switch sensor {
        case .deviceMotion:
            guard manager.isDeviceMotionAvailable else { throw CLIError("\(spec) has no device motion (it needs an accelerometer and a gyroscope): pass --sensor accelerometer") }
            manager.deviceMotionUpdateInterval = interval
            manager.startDeviceMotionUpdates(to: queue) { m, e in record(m?.timestamp, e) }
            emittedKind = nil
        case .accelerometer:
            guard manager.isAccelerometerAvailable else { throw CLIError("\(spec) has no accelerometer") }
            manager.accelerometerUpdateInterval = interval
            manager.startAccelerometerUpdates(to: queue) { d, e in record(d?.timestamp, e) }
            emittedKind = .accelerometer
        case .gyro:
            guard manager.isGyroAvailable else { throw CLIError("\(spec) has no gyroscope") }
            manager.gyroUpdateInterval = interval
            manager.startGyroUpdates(to: queue) { d, e in record(d?.timestamp, e) }
            emittedKind = .gyro
        case .magnetometer:
            guard manager.isMagnetometerAvailable else { throw CLIError("\(spec) has no magnetometer") }
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
        var windowStart = (cpu: Self.cpuSeconds(), delivered: 0)
        var nextWindow = window
        while failure.withLock({ $0 }) == nil {
            let elapsed = ProcessInfo.processInfo.systemUptime - started
            if elapsed >= seconds { break }
            try await Task.sleep(nanoseconds: UInt64(min(1, seconds - elapsed, max(0.001, nextWindow - elapsed)) * 1e9))
            let now = ProcessInfo.processInfo.systemUptime - started
            let rss = Self.residentKilobytes()
            rssMax = max(rssMax, rss)
            rssEnd = rss
            if rssAfterWarmup == nil, now >= warmup { rssAfterWarmup = rss }
            if now >= nextWindow - 0.0005 {
                let cpu = Self.cpuSeconds(), delivered = tally.withLock { $0.delivered }
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
        stopUpdates(manager)
        let after = rssAfterWarmup ?? rssStart
        let expected = emittedKind.map { counting.emitted($0) } ?? counting.deviceMotionUpdates
        let cpu = Self.cpuRatio(windows, warmup: warmup, window: window)
        let result = tally.withLock { tally in
            Result(source: spec, sensor: sensor.rawValue, rate_hz: rate, seconds: seconds, warmup_seconds: warmup, expected: expected,
                   delivered: tally.delivered, lost: max(0, expected - tally.delivered), out_of_order: tally.outOfOrder,
                   rss_kb: .init(start: rssStart, after_warmup: after, end: rssEnd, max: rssMax), growth_kb: rssEnd - after,
                   windows: windows, cpu_ratio: cpu.map { ($0.ratio * 1000).rounded() / 1000 }, error: error)
        }
        if json {
            try printJSON(result)
        } else {
            var text = """
                soak: \(sensor.rawValue) from \(spec) at \(OptionValue.format(rate)) Hz for \(OptionValue.format(seconds)) s (warm-up \(OptionValue.format(warmup)) s)
                  expected      \(result.expected)
                  delivered     \(result.delivered)
                  lost          \(result.lost)
                  out of order  \(result.out_of_order)
                  RSS kB        start \(rssStart)  after warm-up \(after)  end \(rssEnd)  max \(rssMax)
                  growth        \(result.growth_kb) kB after warm-up
                """
            if !windows.isEmpty {
                text += "\n  window (s)    delivered   CPU (s)   RSS (kB)"
                for w in windows {
                    text += "\n  " + [OptionValue.format(w.end_s), String(w.delivered), String(format: "%.3f", w.cpu_s), String(w.rss_kb)]
                        .map { $0.padding(toLength: 12, withPad: " ", startingAt: 0) }.joined()
                }
                if let r = result.cpu_ratio { text += "\n  CPU, last full window over first after warm-up: \(r)" }
            }
            print(text)
        }
        if let error { throw CLIError(error) }
        let cpuGrew = cpu.map { $0.ratio > 2 && $0.excess > 0.005 * window } ?? false
        if result.lost > 0 || result.out_of_order > 0 || result.growth_kb >= 1024 || cpuGrew { throw ExitCode(1) }
    }

    private func stopUpdates(_ manager: CMMotionManager) {
        switch sensor {
        case .deviceMotion: manager.stopDeviceMotionUpdates()
        case .accelerometer: manager.stopAccelerometerUpdates()
        case .gyro: manager.stopGyroUpdates()
        case .magnetometer: manager.stopMagnetometerUpdates()
        }
    }
}
