import MotionFusion
import MotionSources
import MotionTestSupport
import Testing

/// ``SourceWorker`` alone, on a ``ManualClock``: a loop body that delivers one sample per tick.
@Suite struct SourceWorkerTests {
    /// A body delivering one sample at each 0.1 s tick from `start`, until the worker stops.
    static func ticking(_ worker: SourceWorker, start: Double) {
        var t = start
        while worker.sleep(until: t) {
            worker.deliver([RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1))])
            t += 0.1
        }
    }

    @Test func aBodyRunsExactlyTheTicksDueAndNothingAfterTheStop() async {
        let clock = ManualClock(start: 10)
        let recorder = EventRecorder()
        let worker = SourceWorker(sink: recorder.sink, clock: clock)
        #expect(worker.spawn(name: "tick") { Self.ticking($0, start: 10) })
        #expect(await clock.settle(parked: 1))
        #expect(recorder.samples.map(\.timestamp) == [10])
        clock.advance(to: 10.35)
        #expect(await clock.settle(parked: 1))
        #expect(recorder.samples.count == 4, "10, 10.1, 10.2, 10.3: \(recorder.samples.map(\.timestamp))")
        worker.stop()
        recorder.close()
        #expect(worker.isStopping)
        #expect(clock.parkedThreads == 0, "the body returned")
        clock.advance(to: 20)
        #expect(await clock.settle(parked: 0))
        #expect(recorder.lateCalls == 0)
        #expect(recorder.samples.count == 4)
    }

    /// A terminal event goes out once and ends the worker: later deliveries, sends and terminal events
    /// are dropped, and the body's sleep returns `false`.
    @Test func oneTerminalEventThenSilence() async {
        let clock = ManualClock(start: 0)
        let recorder = EventRecorder()
        let worker = SourceWorker(sink: recorder.sink, clock: clock)
        // What the body saw: the first end delivered, the second not, and the sleep after them.
        let seen = Locked<[Bool]>([])
        worker.spawn { w in
            w.deliver([RawSample(sensor: .gyro, timestamp: 0, value: Vector3(0, 0, 0))])
            let first = w.end(.finished)
            let second = w.end(.failed(SourceError(.io, "late")))
            w.send(.interrupted(SourceError(.io, "late")))
            w.deliver([RawSample(sensor: .gyro, timestamp: 1, value: Vector3(0, 0, 0))])
            let slept = w.sleep(until: 5)
            seen.withLock { $0 = [first, second, slept] }
        }
        #expect(await recorder.waitFor { $0.contains(where: \.isTerminal) })
        worker.join()
        #expect(seen.withLock { $0 } == [true, false, false])
        #expect(recorder.events.count == 2)
        #expect(recorder.events.last?.isTerminal == true)
        #expect(worker.isStopping)
    }

    /// A sink that stops its own worker (on the worker's thread) does not deadlock: the stop only
    /// raises the flag there, and the body ends at its next sleep.
    @Test func aSinkMayStopItsOwnWorker() async {
        let clock = ManualClock(start: 0)
        let recorder = EventRecorder()
        let box = Locked<SourceWorker?>(nil)
        let onOwnThread = Locked<[Bool]>([])
        let worker = SourceWorker(sink: { event in
            recorder.sink(event)
            if let w = box.withLock({ $0 }) {
                onOwnThread.withLock { $0.append(w.isCurrentThread) }
                w.stop()
            }
        }, clock: clock)
        box.withLock { $0 = worker }
        worker.spawn { Self.ticking($0, start: 0) }
        #expect(await recorder.waitFor { !$0.isEmpty })
        // The sink records the sample before it stops the worker, and "nobody parked" holds while the
        // body is still in the sink: wait for the stop itself (ThreadSanitizer's slowness showed it).
        #expect(await eventually { worker.isStopping })
        #expect(await clock.settle(parked: 0))
        clock.advance(to: 1)
        #expect(await clock.settle(parked: 0))
        #expect(recorder.samples.count == 1)
        #expect(onOwnThread.withLock { $0 } == [true])
        #expect(worker.isStopping)
        box.withLock { $0 = nil }
    }

    /// Several bodies on one worker share the clock; the stop waits for all of them.
    @Test func aStopWaitsForEveryBody() async {
        let clock = ManualClock(start: 0)
        let recorder = EventRecorder()
        let worker = SourceWorker(sink: recorder.sink, clock: clock)
        worker.spawn { Self.ticking($0, start: 0) }
        worker.spawn { Self.ticking($0, start: 0.05) }
        #expect(worker.started)
        #expect(await clock.settle(parked: 2))
        clock.advance(to: 0.52)
        #expect(await clock.settle(parked: 2))
        // 0, 0.1 … 0.5 and 0.05 … 0.45: 6 + 5, serialised.
        #expect(recorder.samples.count == 11)
        worker.stop()
        #expect(clock.parkedThreads == 0)
    }
}
