import ArgumentParser
import Foundation
import MotionSources
import OpenCoreMotion

/// `coremotion bench soak`: device motion at 1 kHz for a long time; memory growth and lost samples.
struct BenchSoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Stream device motion from the simulator (real-time clock) through a CMMotionManager for a long time; report memory growth after warm-up and lost samples.",
        discussion: """
            Memory is the resident set size from /proc/self/statm, sampled every second; growth is the \
            last sample minus the sample at the end of the warm-up (a quarter of the run, at most 60 s). \
            Goal: 0 lost, under 1 MB (1024 kB) growth; exit status 1 when either is missed.
            """
    )

    @Option(parsing: .unconditional, help: "Device-motion rate in Hz (at most 1000).", transform: OptionValue.hertz(maximum: 1000))
    var rate: Double = 1000

    @Option(parsing: .unconditional, help: "How long to run, in seconds (4…86400).", transform: OptionValue.seconds(4...86400))
    var seconds: Double = 3600

    @Flag(help: "Print JSON: rate_hz, seconds, warmup_seconds, expected, delivered, lost, out_of_order, rss_kb {start, after_warmup, end, max}, growth_kb.")
    var json = false

    struct Result: Codable {
        var rate_hz: Double
        var seconds: Double
        var warmup_seconds: Double
        var expected: Int
        var delivered: Int
        var lost: Int
        var out_of_order: Int
        var rss_kb: RSS
        var growth_kb: Int
        struct RSS: Codable { var start: Int; var after_warmup: Int; var end: Int; var max: Int }
    }

    /// The resident set size in kB (`/proc/self/statm`, second field, in pages); 0 where unreadable.
    static func residentKilobytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    func run() async throws {
        let source = CountingSource(SimulatedDevice(scenario: .handheld))
        let manager = CMMotionManager(source: source)
        guard manager.isDeviceMotionAvailable else { throw CLIError("the simulator has no device motion") }
        manager.deviceMotionUpdateInterval = 1 / rate
        let tally = Locked(DeliveryTally())
        let cutoff = Locked(Double.infinity)
        let queue = OperationQueue.serial()
        let rssStart = Self.residentKilobytes()
        manager.startDeviceMotionUpdates(to: queue) { motion, _ in
            guard let motion else { return }
            let limit = cutoff.withLock { $0 }
            tally.withLock { $0.record(timestamp: motion.timestamp, now: 0, cutoff: limit, recordLatency: false) }
        }
        let warmup = min(60, seconds / 4)
        let started = ProcessInfo.processInfo.systemUptime
        var rssAfterWarmup: Int?
        var rssMax = rssStart
        var rssEnd = rssStart
        while true {
            let elapsed = ProcessInfo.processInfo.systemUptime - started
            if elapsed >= seconds { break }
            try await Task.sleep(nanoseconds: UInt64(min(1, seconds - elapsed) * 1e9))
            let rss = Self.residentKilobytes()
            rssMax = max(rssMax, rss)
            rssEnd = rss
            if rssAfterWarmup == nil, ProcessInfo.processInfo.systemUptime - started >= warmup { rssAfterWarmup = rss }
        }
        let end = MonotonicClock.now()
        cutoff.withLock { $0 = end }
        source.setCutoff(end)
        try await tally.waitForDrain()
        manager.stopDeviceMotionUpdates()
        let after = rssAfterWarmup ?? rssStart
        let result = tally.withLock { tally in
            Result(rate_hz: rate, seconds: seconds, warmup_seconds: warmup, expected: source.deviceMotionUpdates, delivered: tally.delivered,
                   lost: max(0, source.deviceMotionUpdates - tally.delivered), out_of_order: tally.outOfOrder,
                   rss_kb: .init(start: rssStart, after_warmup: after, end: rssEnd, max: rssMax), growth_kb: rssEnd - after)
        }
        if json {
            try printJSON(result)
        } else {
            print("""
                soak: device motion at \(OptionValue.format(rate)) Hz for \(OptionValue.format(seconds)) s (warm-up \(OptionValue.format(warmup)) s)
                  expected      \(result.expected)
                  delivered     \(result.delivered)
                  lost          \(result.lost)
                  out of order  \(result.out_of_order)
                  RSS kB        start \(rssStart)  after warm-up \(after)  end \(rssEnd)  max \(rssMax)
                  growth        \(result.growth_kb) kB after warm-up
                """)
        }
        if result.lost > 0 || result.out_of_order > 0 || result.growth_kb >= 1024 { throw ExitCode(1) }
    }
}
