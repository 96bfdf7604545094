import MotionSourcesLinuxTesting
import Testing
import MotionTestSupport
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux

/// Hundreds of thousands of deliveries through the IIO and evdev sources' own threads and sink
/// (issue 19): the per-delivery cost must not grow. The defect this guards against kept the sink as
/// the value of a generic lock; every delivery wrapped it in one more reabstraction thunk, so each call
/// went one frame deeper than the last until the stack overflowed (SIGSEGV after ~95 000 deliveries).
/// The depth of the stack at the sink is what grew, so it is what these tests measure: it must be the
/// same at the 200 000th delivery as at the 1 000th. It is a count, not a time, so load cannot flake it.
@Suite struct LongRunDeliveryTests {
    static let deliveries = 200_000

    /// Counts deliveries and notes the stack address at the sink.
    final class DepthProbe: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        private var depthAt1000: UInt = 0
        private var deepest: UInt = .max
        private var lastTimestamp = -Double.infinity
        private var outOfOrder = 0
        private(set) var failure: SourceError?

        var delivered: Int { lock.withLock { count } }
        /// Bytes the stack grew from the 1 000th delivery to the deepest one after it.
        var growth: UInt { lock.withLock { depthAt1000 == 0 || deepest == .max ? 0 : depthAt1000 &- min(deepest, depthAt1000) } }
        var reversed: Int { lock.withLock { outOfOrder } }

        var sink: @Sendable (SourceEvent) -> Void {
            { [self] event in
                let here = stackAddress()
                lock.withLock {
                    switch event {
                    case .sample(let s):
                        count += 1
                        if s.timestamp < lastTimestamp { outOfOrder += 1 }
                        lastTimestamp = s.timestamp
                        if count == 1_000 { depthAt1000 = here } else if count > 1_000 { deepest = min(deepest, here) }
                    case .failed(let f): failure = f
                    case .finished, .interrupted: break
                    }
                }
            }
        }
    }

    /// Feeds `chunk(k, start)` to `node` whenever fewer than `low` bytes wait, until `probe` has `target`
    /// deliveries; `start` is `CLOCK_MONOTONIC` in ns when feeding began, after the node was opened
    /// (with `afterOpening`). The feeding loop polls with `usleep` on a thread of its own
    /// (``offThePool(_:)``), not on one of the dispatch pool's threads that the test's task runs on; so
    /// does the wait for the node to open, since an IIO buffer still empty 2 s after it was enabled is
    /// given up for polling and a task resuming on a loaded pool can come later than that.
    static func feed(_ node: InMemoryDeviceNode, probe: DepthProbe, target: Int, low: Int, afterOpening: Bool = false,
                     chunk: @escaping @Sendable (_ k: Int, _ start: Int64) -> [UInt8]) async throws {
        try await offThePool {
            let deadline = Date().addingTimeInterval(60)   // bounds a failure only
            while afterOpening && node.opens < 1 {
                if Date() > deadline { throw TimedOut() }
                usleep(1_000)
            }
            let start = LinuxClock.monotonicNs()
            try feedBlocking(node, probe: probe, target: target, low: low) { chunk($0, start) }
        }
    }

    private static func feedBlocking(_ node: InMemoryDeviceNode, probe: DepthProbe, target: Int, low: Int, chunk: (Int) -> [UInt8]) throws {
        var pushed = 0
        let started = Date()
        var idle = Date()
        var lastCount = 0
        while probe.delivered < target {
            if node.pendingBytes < low, pushed < target { pushed += 1; node.push(chunk(pushed - 1)); continue }
            let now = probe.delivered
            if now != lastCount { lastCount = now; idle = Date() }
            // Stalled for 60 s: the source died (or lost data); fail instead of hanging.
            // Two minutes in all: far more than the ~10 s it takes, but bounded.
            if Date().timeIntervalSince(idle) > 60 || Date().timeIntervalSince(started) > 120 || probe.failure != nil { throw TimedOut() }
            usleep(200)
        }
    }

    @Test func iioBufferedCaptureStaysFlatOver200000Deliveries() async throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let probe = DepthProbe()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: probe.sink)
        defer { _ = try? source.apply(.none, sink: probe.sink) }
        let template = Array(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin").prefix(24))
        // Stamped after the buffer was enabled (earlier scans are stale and dropped), 1 µs apart: the
        // 200 000 end 0.2 s ahead of the clock, well within what the capture accepts.
        let scansPerChunk = 1_000
        try await Self.feed(node, probe: probe, target: Self.deliveries, low: 24 * 200, afterOpening: true) { k, base in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(24 * scansPerChunk)
            for i in 0..<scansPerChunk {
                var scan = template
                withUnsafeBytes(of: (base + Int64(k * scansPerChunk + i) * 1_000).littleEndian) { for b in 0..<8 { scan[16 + b] = $0[b] } }
                bytes += scan
            }
            return bytes
        }
        #expect(probe.delivered >= Self.deliveries)
        #expect(probe.failure == nil)
        #expect(probe.reversed == 0)
        #expect(probe.growth <= 512, "the stack at the sink grew by \(probe.growth) bytes between the 1 000th and the 200 000th delivery")
    }

    @Test func evdevStreamStaysFlatOver200000Deliveries() async throws {
        let (id, _) = try Evtest.joycon()
        let twin = InMemoryEvdevDevice(identity: id)
        let source = EvdevSource(node: id, opener: twin)
        let probe = DepthProbe()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: probe.sink)
        defer { _ = try? source.apply(.none, sink: probe.sink) }
        let framesPerChunk = 500
        try await Self.feed(twin.node, probe: probe, target: Self.deliveries, low: InputEvent.byteSize * 300) { k, _ in
            var events: [InputEvent] = []
            events.reserveCapacity(3 * framesPerChunk)
            for i in 0..<framesPerChunk {
                let n = k * framesPerChunk + i
                let time = 100 + Double(n) * 0.005
                // MSC_TIMESTAMP in µs (wraps at 32 bits, as the driver's does), one axis change, the report.
                events += [InputEvent(time: time, type: EvdevCode.EV_MSC, code: EvdevCode.MSC_TIMESTAMP, value: Int32(truncatingIfNeeded: n &* 5_000)),
                           InputEvent(time: time, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: Int32(n % 97)),
                           InputEvent(time: time, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)]
            }
            return InputEvent.encode(events)
        }
        #expect(probe.delivered >= Self.deliveries)
        #expect(probe.failure == nil)
        #expect(probe.reversed == 0)
        #expect(probe.growth <= 512, "the stack at the sink grew by \(probe.growth) bytes between the 1 000th and the 200 000th delivery")
    }
}

/// The address of a local in a frame of its own: how deep the caller's stack is.
@inline(never) func stackAddress() -> UInt {
    var marker: UInt8 = 0
    return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
}
