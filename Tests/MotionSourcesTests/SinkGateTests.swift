import MotionFusion
import MotionSources
import MotionTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ``SinkGate`` under threads delivering, ending and closing at once: serialised sink calls, none
/// after a close returns, one terminal event per opening. Run under ThreadSanitizer too.
@Suite struct SinkGateTests {
    static func sample(_ t: Double) -> RawSample {
        RawSample(sensor: .gyro, timestamp: t, value: Vector3(0, 0, 0))
    }

    /// Runs `count` bodies on their own threads (the package's runtime, ``SourceWorker``) and returns
    /// once every body has returned, without blocking the caller's thread meanwhile.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
        let worker = SourceWorker()
        let left = Locked(count)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<count {
                worker.spawn(name: "gate-\(index)") { _ in
                    body(index)
                    if left.withLock({ $0 -= 1; return $0 == 0 }) { done.resume() }
                }
            }
        }
        worker.join()  // the bodies have returned: only the threads' exits are left
    }

    /// Spins (yielding) on a thread of its own until `ready`: for the test's threads, never for a
    /// Swift-concurrency thread.
    static func spin(until ready: () -> Bool) {
        while !ready() { sched_yield() }
    }

    /// A sink that counts calls, and calls made while another call was in progress.
    final class Overlaps: Sendable {
        private let state = Locked((inside: 0, overlaps: 0, calls: 0))
        func enter() { state.withLock { s in if s.inside > 0 { s.overlaps += 1 }; s.inside += 1; s.calls += 1 } }
        func leave() { state.withLock { $0.inside -= 1 } }
        var count: Int { state.withLock { $0.overlaps } }
        var calls: Int { state.withLock { $0.calls } }
    }

    @Test func noSinkCallBeginsAfterCloseReturnsAndCallsNeverOverlap() async {
        for _ in 0..<20 {
            let recorder = EventRecorder()
            let overlaps = Overlaps()
            let gate = SinkGate(sink: { event in
                overlaps.enter()
                recorder.sink(event)
                overlaps.leave()
            })
            let refused = Locked(0)
            await Self.onThreads(5) { index in
                if index == 4 {
                    // The closer: once some samples are in, close, then mark every later call late.
                    Self.spin { overlaps.calls >= 200 }
                    gate.close()
                    recorder.close()
                    return
                }
                var t = Double(index)
                while gate.deliver([Self.sample(t), Self.sample(t + 0.5)]) > 0 || gate.deliver(.sample(Self.sample(t))) { t += 1 }
                refused.withLock { $0 += 1 }
            }
            #expect(recorder.lateCalls == 0)
            #expect(overlaps.count == 0)
            #expect(refused.withLock { $0 } == 4, "every deliverer saw the gate shut")
            #expect(!gate.isOpen)
        }
    }

    @Test func oneTerminalEventAmongConcurrentEndsAndNothingAfterIt() async {
        for _ in 0..<20 {
            let recorder = EventRecorder()
            let gate = SinkGate(sink: recorder.sink)
            let won = Locked(0)
            await Self.onThreads(6) { index in
                for n in 0..<50 {
                    gate.deliver(.sample(Self.sample(Double(n))))
                    if n == 10 + index, gate.end(index % 2 == 0 ? .finished : .failed(SourceError(.io, "thread \(index)"))) {
                        won.withLock { $0 += 1 }
                    }
                }
            }
            let events = recorder.events
            #expect(won.withLock { $0 } == 1)
            #expect(events.filter(\.isTerminal).count == 1)
            #expect(events.last?.isTerminal == true, "nothing after the terminal event")
            #expect(gate.hasEnded)
            #expect(!gate.deliver(.sample(Self.sample(99))))
        }
    }

    /// A sink that closes its own gate (a consumer stopping its source from its handler) does not
    /// deadlock, and the rest of the batch in progress is dropped.
    @Test func aSinkMayCloseItsOwnGate() async {
        let recorder = EventRecorder()
        let box = Locked<SinkGate?>(nil)
        let gate = SinkGate(sink: { event in
            recorder.sink(event)
            box.withLock { $0 }?.close()
        })
        box.withLock { $0 = gate }
        let delivered = Locked(-1)
        await Self.onThreads(1) { _ in
            delivered.withLock { $0 = gate.deliver((0..<5).map { Self.sample(Double($0)) }) }
        }
        #expect(delivered.withLock { $0 } == 1)
        #expect(recorder.samples.map(\.timestamp) == [0])
        #expect(!gate.isOpen)
        box.withLock { $0 = nil }
    }

    /// `close()` from another thread waits for the sink call in progress to return.
    @Test func closeWaitsForTheCallInProgress() async {
        for _ in 0..<10 {
            let order = Locked<[String]>([])
            let gateBox = Locked<SinkGate?>(nil)
            let gate = SinkGate(sink: { _ in
                order.withLock { $0.append("sink entered") }
                // Hold the call until the closer has shut the gate (close shuts it, then waits).
                Self.spin { gateBox.withLock { $0 }.map { !$0.isOpen } ?? true }
                order.withLock { $0.append("sink returns") }
            })
            gateBox.withLock { $0 = gate }
            await Self.onThreads(2) { index in
                if index == 0 {
                    gate.deliver(.sample(Self.sample(0)))
                } else {
                    Self.spin { order.withLock { !$0.isEmpty } }
                    gate.close()
                    order.withLock { $0.append("close returns") }
                }
            }
            #expect(order.withLock { $0 } == ["sink entered", "sink returns", "close returns"])
            gateBox.withLock { $0 = nil }
        }
    }

    @Test func reopeningStartsANewRunWithItsOwnTerminalEvent() {
        let first = EventRecorder()
        let second = EventRecorder()
        let gate = SinkGate(sink: first.sink)
        #expect(gate.end(.finished))
        #expect(!gate.end(.finished))
        gate.open(second.sink)
        #expect(gate.isOpen)
        #expect(gate.deliver(.sample(Self.sample(1))))
        #expect(gate.end(.failed(SourceError(.io, "second run"))))
        #expect(first.events == [.finished])
        #expect(second.events.count == 2)
        gate.close()
        gate.open(first.sink)
        #expect(gate.deliver(.sample(Self.sample(2))))
        #expect(first.events.count == 2)
    }

    @Test func withoutASinkNothingIsCalledButTheRunStillEndsOnce() {
        let gate = SinkGate()
        #expect(!gate.isOpen)
        #expect(!gate.deliver(.sample(Self.sample(0))))
        #expect(gate.deliver([Self.sample(0)]) == 0)
        #expect(gate.end(.finished))
        #expect(!gate.end(.finished))
        #expect(gate.hasEnded)
    }
}
