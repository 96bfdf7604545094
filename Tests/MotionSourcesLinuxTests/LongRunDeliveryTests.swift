import MotionSourcesLinuxTesting
import Testing
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

    /// Feeds `chunk()` to `node` whenever fewer than `low` bytes wait, until `probe` has `target` deliveries.
    static func feed(_ node: InMemoryDeviceNode, probe: DepthProbe, target: Int, low: Int, chunk: (Int) -> [UInt8]) throws {
        var pushed = 0
        var idle = Date()
        var lastCount = 0
        while probe.delivered < target {
            if node.pendingBytes < low, pushed < target { pushed += 1; node.push(chunk(pushed - 1)); continue }
            let now = probe.delivered
            if now != lastCount { lastCount = now; idle = Date() }
            // Stalled for 10 s: the source died (or lost data); fail instead of hanging.
            if Date().timeIntervalSince(idle) > 10 || probe.failure != nil { throw TimedOut() }
            usleep(200)
        }
    }

    @Test func iioBufferedCaptureStaysFlatOver200000Deliveries() throws {
        let (fs, node) = try Fixtures.hidBufferTwin(clockWritable: true)
        let options = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        let source = try LinuxSensorDiscovery.source(forSpec: "iio", options: options)
        let probe = DepthProbe()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: probe.sink)
        defer { _ = try? source.apply(.none, sink: probe.sink) }
        try waitUntil { node.opens == 1 }
        let template = Array(try Fixtures.bytes("iio/iio-sensor-proxy_orientation-normal.bin").prefix(24))
        let base = LinuxClock.monotonicNs() - 1_000_000_000
        let scansPerChunk = 1_000
        try Self.feed(node, probe: probe, target: Self.deliveries, low: 24 * 200) { k in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(24 * scansPerChunk)
            for i in 0..<scansPerChunk {
                var scan = template
                // 1 µs apart, in the past of the monotonic clock, so none is dropped as from the future.
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

    @Test func evdevStreamStaysFlatOver200000Deliveries() throws {
        let (id, _) = try Evtest.joycon()
        let twin = InMemoryEvdevDevice(identity: id)
        let source = EvdevSource(node: id, opener: twin)
        let probe = DepthProbe()
        _ = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: probe.sink)
        defer { _ = try? source.apply(.none, sink: probe.sink) }
        let framesPerChunk = 500
        try Self.feed(twin.node, probe: probe, target: Self.deliveries, low: InputEvent.byteSize * 300) { k in
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
