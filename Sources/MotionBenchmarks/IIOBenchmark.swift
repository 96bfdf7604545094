#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionSourcesLinux

/// A speed benchmark of the buffered IIO path: an emulated device (a sysfs tree in a temporary
/// directory, its `/dev/iio:device0` a FIFO) written at a fixed rate by a writer thread, each scan
/// stamped with `CLOCK_MONOTONIC` when written and numbered in its x channel; the real
/// ``IIOSource`` reads it through `poll`/`read` and the benchmark's consumer measures, per sample,
/// the latency from the scan's timestamp to the consumer, and counts lost scans.
package enum IIOBenchmark {
    /// What one run measured.
    package struct Result: Sendable, Hashable, Codable {
        /// Scans written.
        package var sent: Int
        /// Samples received.
        package var received: Int
        /// Scans never received (gaps in the numbering, and scans written but not received by the end).
        package var lost: Int
        /// Latency percentiles and maximum, in milliseconds.
        package var p50Milliseconds: Double, p99Milliseconds: Double, p999Milliseconds: Double, maxMilliseconds: Double
        /// Configured rate (Hz) and seconds.
        package var rate: Double, seconds: Double
        /// Samples per second actually received.
        package var achievedRate: Double
        /// How the source ran the accelerometer (`buffered …` or `polling …`).
        package var mode: String
    }

    /// Runs the benchmark.
    ///
    /// - Parameters:
    ///   - rate: scans per second, default 1000.
    ///   - seconds: how long to write, default 10.
    ///   - consumer: `nil` to measure at the source's sink; otherwise a function that starts a
    ///     consumer on the source (e.g. a `CMMotionManager` handler) calling `deliver(timestamp, x)`
    ///     per sample, and returns a function that stops it.
    /// - Throws: ``SourceError`` when the emulated device cannot be set up.
    package static func run(rate: Double = 1000, seconds: Double = 10,
                           consumer: ((any SensorSource, @escaping @Sendable (Double, Double) -> Void) throws -> (@Sendable () -> Void))? = nil) throws -> Result {
        let root = "/tmp/coremotion-bench-\(getpid())-\(LinuxClock.monotonicNs())"
        let fs = POSIXFileSystem()
        let dir = root + "/sys/bus/iio/devices/iio:device0"
        for d in [dir + "/scan_elements", dir + "/buffer", dir + "/trigger", root + "/dev"] { mkdirs(d) }
        defer { removeTree(root) }
        let files: [(String, String)] = [
            ("name", "bench_accel"), ("in_accel_x_raw", "0"), ("in_accel_y_raw", "0"), ("in_accel_z_raw", "-1000"),
            ("in_accel_scale", "0.00980665"), ("sampling_frequency", formatHz(rate)), ("sampling_frequency_available", formatHz(rate)),
            ("current_timestamp_clock", "monotonic"), ("buffer/enable", "0"), ("buffer/length", "1024"),
            ("scan_elements/in_accel_x_en", "0"), ("scan_elements/in_accel_x_index", "0"), ("scan_elements/in_accel_x_type", "le:s16/16>>0"),
            ("scan_elements/in_accel_y_en", "0"), ("scan_elements/in_accel_y_index", "1"), ("scan_elements/in_accel_y_type", "le:s16/16>>0"),
            ("scan_elements/in_accel_z_en", "0"), ("scan_elements/in_accel_z_index", "2"), ("scan_elements/in_accel_z_type", "le:s16/16>>0"),
            ("scan_elements/in_timestamp_en", "0"), ("scan_elements/in_timestamp_index", "3"), ("scan_elements/in_timestamp_type", "le:s64/64>>0"),
        ]
        for (name, value) in files {
            let p = dir + "/" + name
            let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw SourceError(.io, "cannot create", path: p) }
            _ = (value + "\n").withCString { write(fd, $0, strlen($0)) }
            close(fd)
        }
        let fifo = root + "/dev/iio:device0"
        guard mkfifo(fifo, 0o600) == 0 else { throw SourceError(.io, "mkfifo failed", path: fifo) }
        // The writer's end opened read-write first, so the source never sees a FIFO without writer.
        let wfd = open(fifo, O_RDWR | O_CLOEXEC)
        guard wfd >= 0 else { throw SourceError(.io, "cannot open", path: fifo) }
        _ = fcntl(wfd, 1031 /* F_SETPIPE_SZ */, 1 << 20)

        let options = LinuxDiscoveryOptions(sysfsRoot: root + "/sys", devRoot: root + "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let stats = Stats(capacity: Int(rate * seconds) + 16)  // safe: --rate and --seconds are validated (≤ 4 kHz, ≤ 3600 s)
        let deliver: @Sendable (Double, Double) -> Void = { timestamp, x in
            stats.record(latency: LinuxClock.monotonic() - timestamp, sequence: Int((abs(x) * 9.80665 / 0.00980665).rounded()))  // safe: x is the benchmark's own scan counter, read back (its sign is the driver rule's: a chip name is negated)
        }
        let stop: @Sendable () -> Void
        if let consumer {
            stop = try consumer(source, deliver)
        } else {
            _ = try source.apply(SensorDemand(rates: [.accelerometer: rate]), sink: { event in
                if case .sample(let s) = event { deliver(s.timestamp, s.value.x) }
            })
            stop = { _ = try? source.apply(.none, sink: { _ in }) }
        }
        // Wait until the source has the buffer enabled and the node open.
        let enablePath = dir + "/buffer/enable"
        let deadline = LinuxClock.monotonic() + 5
        while fs.attribute(enablePath) != "1" && LinuxClock.monotonic() < deadline { usleep(1000) }
        usleep(20_000)

        // Writer: one 16-byte scan per period, on absolute deadlines; real-time priority when
        // permitted, like a device's interrupt, so a loaded machine does not bunch the scans.
        var param = sched_param()
        param.sched_priority = 6
        var oldPolicy: Int32 = 0
        var oldParam = sched_param()
        pthread_getschedparam(pthread_self(), &oldPolicy, &oldParam)
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        defer { _ = pthread_setschedparam(pthread_self(), oldPolicy, &oldParam) }
        let total = Int(rate * seconds)  // safe: --rate and --seconds are validated (≤ 4 kHz, ≤ 3600 s)
        let period = Int64(1e9 / rate)  // safe: rate > 0, validated
        var next = LinuxClock.monotonicNs() + period
        var scan = [UInt8](repeating: 0, count: 16)
        for i in 0..<total {
            var ts = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))  // safe: integer nanoseconds, no conversion from Double
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            let seq = Int16(truncatingIfNeeded: i % 30_000)
            withUnsafeBytes(of: seq.littleEndian) { scan[0] = $0[0]; scan[1] = $0[1] }
            scan[4] = 0x18; scan[5] = 0xFC   // z = −1000
            withUnsafeBytes(of: LinuxClock.monotonicNs().littleEndian) { for k in 0..<8 { scan[8 + k] = $0[k] } }
            _ = scan.withUnsafeBytes { write(wfd, $0.baseAddress, 16) }
            next += period
        }
        // Let the last scans arrive, then stop.
        let drainDeadline = LinuxClock.monotonic() + 1
        while stats.count < total && LinuxClock.monotonic() < drainDeadline { usleep(1000) }
        stop()
        close(wfd)
        let mode = (source as? IIOSource)?.modes[.accelerometer] ?? "?"
        return stats.result(sent: total, rate: rate, seconds: seconds, mode: mode)
    }

    final class Stats: Sendable {
        private struct Tally {
            var latencies: [Double]
            var lastSequence: Int?
            var gaps = 0
            var first: Double?
            var last = 0.0
        }
        private let tally: Locked<Tally>
        init(capacity: Int) {
            var latencies: [Double] = []
            latencies.reserveCapacity(capacity)
            tally = Locked(Tally(latencies: latencies))
        }
        var count: Int { tally.withLock { $0.latencies.count } }
        func record(latency: Double, sequence: Int) {
            let now = LinuxClock.monotonic()
            tally.withLock { t in
                t.latencies.append(latency)
                if let l = t.lastSequence {
                    let expected = (l + 1) % 30_000
                    if sequence != expected { t.gaps += (sequence - expected + 30_000) % 30_000 }
                }
                t.lastSequence = sequence
                if t.first == nil { t.first = now }
                t.last = now
            }
        }
        func result(sent: Int, rate: Double, seconds: Double, mode: String) -> Result {
            let t = tally.withLock { $0 }
            let sorted = t.latencies.sorted()
            func pct(_ p: Double) -> Double { sorted.nearestRankPercentile(p).map { $0 * 1000 } ?? .nan }
            let span = (t.first.map { t.last - $0 } ?? 0)
            return Result(sent: sent, received: sorted.count, lost: t.gaps + max(0, sent - sorted.count - t.gaps),
                          p50Milliseconds: pct(0.5), p99Milliseconds: pct(0.99), p999Milliseconds: pct(0.999),
                          maxMilliseconds: (sorted.last ?? .nan) * 1000, rate: rate, seconds: seconds,
                          achievedRate: span > 0 ? Double(sorted.count - 1) / span : 0, mode: mode)
        }
    }

    private static func mkdirs(_ path: String) {
        var p = ""
        for c in path.split(separator: "/") {
            p += "/" + c
            mkdir(p, 0o755)
        }
    }

    private static func removeTree(_ path: String) {
        guard let d = opendir(path) else { unlink(path); return }
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            var st = stat()
            if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { removeTree(child) } else { unlink(child) }
        }
        closedir(d)
        rmdir(path)
    }
}
