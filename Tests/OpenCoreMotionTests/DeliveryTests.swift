import Foundation
import MotionFusion
import MotionSources
import MotionTestSupport
@testable import OpenCoreMotion
import Testing

@Suite struct PullDeliveryTests {
    @Test func propertyIsNilUntilTheFirstSampleThenHoldsTheLatest() {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.01
        manager.startAccelerometerUpdates()
        #expect(manager.isAccelerometerActive)
        #expect(manager.accelerometerData == nil)
        source.emit(accel(1.00, z: -1))
        #expect(manager.accelerometerData?.acceleration.z == -1)
        source.emit(accel(1.01, z: -0.5))
        #expect(manager.accelerometerData?.acceleration.z == -0.5)
        #expect(manager.accelerometerData?.timestamp == 1.01)
        manager.stopAccelerometerUpdates()
        #expect(!manager.isAccelerometerActive)
    }

    @Test func startingAnUnavailableSensorDoesNothing() {
        let source = ManualSource(sensors: [.accelerometer])
        let manager = CMMotionManager(source: source)
        #expect(!manager.isGyroAvailable && !manager.isMagnetometerAvailable && !manager.isDeviceMotionAvailable)
        manager.startGyroUpdates()
        manager.startMagnetometerUpdates(to: serialQueue()) { _, _ in Issue.record("no handler call expected") }
        manager.startDeviceMotionUpdates()
        #expect(!manager.isGyroActive && !manager.isMagnetometerActive && !manager.isDeviceMotionActive)
        source.emit(gyro(1))
        #expect(manager.gyroData == nil)
        #expect(source.demand.isEmpty)
    }

    @Test func aManagerWithoutSourceHasNothingAvailable() {
        let manager = CMMotionManager(source: ManualSource(sensors: []))
        #expect(!manager.isAccelerometerAvailable)
        manager.startAccelerometerUpdates()
        #expect(!manager.isAccelerometerActive)
    }
}

@Suite struct PushDeliveryTests {
    @Test func everySampleArrivesInOrderEvenWhenTheHandlerIsSlow() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.001
        let seen = Recorder<Double>()
        // A concurrent queue: order must hold anyway.
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        manager.startAccelerometerUpdates(to: queue) { data, error in
            #expect(error == nil)
            if seen.count % 50 == 0 { usleep(20_000) }
            seen.append(data!.timestamp)
        }
        let n = 400
        for i in 0..<n { source.emit(accel(10 + Double(i) * 0.001)) }
        #expect(await seen.until { seen.count == n })
        let times = seen.all
        #expect(times == times.sorted())
        #expect(Set(times).count == n)
        manager.stopAccelerometerUpdates()
    }

    @Test func noHandlerCallBeginsAfterStopReturns() async {
        let source = ManualSource()
        let manager = UncheckedSendable(CMMotionManager(source: source))
        manager.value.gyroUpdateInterval = 0.001
        let stopped = Locked(false)
        let lateCalls = Recorder<Double>()
        let calls = Recorder<Double>()
        let queue = OperationQueue()
        // The 21st call holds the queue's thread until stop has returned, so that samples are still
        // waiting when it does (releasing it before stopping lost the race under CI load: all 500 were
        // handled first). Stop does not wait for a call in progress, so holding one across it cannot
        // deadlock. The stop is made on a thread of the test's own, not by the test's task: the handler
        // holds one of the dispatch pool's threads (a plain OperationQueue runs there), one per CPU, and
        // a task that had to resume on that pool to release it waited on itself whenever other work held
        // the rest of the pool (CI, 2 CPUs: the handler's timeout ran out and all 500 were handled).
        let reached = DispatchSemaphore(value: 0)
        let stopping = DispatchSemaphore(value: 0)
        let stopper = Changes()
        let stopperDone = Locked(false)
        Thread.detachNewThread {
            _ = reached.wait(timeout: .now() + 900)   // a backstop only, as below
            manager.value.stopGyroUpdates()
            stopped.withLock { $0 = true }
            stopping.signal()
            stopperDone.withLock { $0 = true }
            stopper.signal()
        }
        manager.value.startGyroUpdates(to: queue) { data, _ in
            if stopped.withLock({ $0 }) { lateCalls.append(data!.timestamp) }
            calls.append(data!.timestamp)
            if calls.count == 21 {
                reached.signal()
                // A backstop only: the stopper thread signals within microseconds of `reached`.
                _ = stopping.wait(timeout: .now() + 900)
            }
            usleep(200)
        }
        for i in 0..<500 { source.emit(gyro(Double(i) * 0.001)) }
        #expect(await stopper.until { stopperDone.withLock { $0 } })
        for i in 500..<600 { source.emit(gyro(Double(i) * 0.001)) }
        #expect(await drained(queue))
        #expect(lateCalls.count == 0)
        #expect(calls.count == 21, "stop must drop samples still waiting; only the call in progress ends")
        #expect(!manager.value.isGyroActive)
    }

    @Test func stopLeavesTheCallersOtherOperationsAlone() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        let queue = serialQueue()
        let mine = Recorder<Int>()
        manager.startAccelerometerUpdates(to: queue) { _, _ in usleep(5_000) }
        source.emit(accel(1))
        queue.addOperation { mine.append(1) }
        manager.stopAccelerometerUpdates()
        #expect(await drained(queue))
        #expect(mine.all == [1])
    }

    @Test func restartingReplacesTheHandler() async {
        let source = ManualSource()
        let manager = CMMotionManager(source: source)
        let first = Recorder<Double>()
        let second = Recorder<Double>()
        let queue = serialQueue()
        manager.startAccelerometerUpdates(to: queue) { d, _ in first.append(d!.timestamp) }
        source.emit(accel(1))
        #expect(await drained(queue))
        manager.startAccelerometerUpdates(to: queue) { d, _ in second.append(d!.timestamp) }
        source.emit(accel(2))
        #expect(await drained(queue))
        #expect(first.all == [1])
        #expect(second.all == [2])
    }
}

@Suite struct IntervalTests {
    @Test func intervalsAreClampedToTheSourceAndReadBackClamped() {
        let source = ManualSource(minimumRate: 2, maximumRate: 200)
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.0001
        #expect(manager.accelerometerUpdateInterval == 1.0 / 200)
        manager.accelerometerUpdateInterval = 10
        #expect(manager.accelerometerUpdateInterval == 0.5)
        manager.accelerometerUpdateInterval = 0.02
        #expect(abs(manager.accelerometerUpdateInterval - 0.02) < 1e-12)
        for bad in [0.0, -1.0, Double.nan, -Double.infinity] {
            manager.gyroUpdateInterval = bad
            #expect(manager.gyroUpdateInterval == 1.0 / 200, "\(bad) means as fast as possible")
        }
        manager.magnetometerUpdateInterval = .infinity
        #expect(manager.magnetometerUpdateInterval == 0.5)
    }

    @Test func consumersAtDifferentIntervalsShareOneStreamDecimatedByTimestamp() async {
        let source = ManualSource()
        let fast = CMMotionManager(source: source)
        let slow = CMMotionManager(source: source)
        fast.accelerometerUpdateInterval = 0.01
        slow.accelerometerUpdateInterval = 0.04
        let fastSeen = Recorder<Double>()
        let slowSeen = Recorder<Double>()
        let q = serialQueue()
        fast.startAccelerometerUpdates(to: q) { d, _ in fastSeen.append(d!.timestamp) }
        slow.startAccelerometerUpdates(to: q) { d, _ in slowSeen.append(d!.timestamp) }
        #expect(source.demand.rates[.accelerometer] == 100)
        // The source runs at 100 Hz with a little jitter.
        for i in 0..<100 {
            let jitter = (i % 3 == 0 ? 0.0003 : -0.0002)
            source.emit(accel(5 + Double(i) * 0.01 + jitter))
        }
        #expect(await drained(q))
        #expect(fastSeen.count == 100)
        #expect(slowSeen.count == 25)
        let slowTimes = slowSeen.all
        #expect(Set(slowTimes).count == slowTimes.count)
        #expect(Set(slowTimes).isSubset(of: Set(fastSeen.all)), "never interpolated")
        for (a, b) in zip(slowTimes, slowTimes.dropFirst()) {
            #expect(abs((b - a) - 0.04) < 0.002)
        }
        slow.stopAccelerometerUpdates()
        fast.stopAccelerometerUpdates()
    }

    @Test func theSourceRunsAtTheFastestConsumersRateAndStopsWithTheLast() async {
        let source = ObservedSource()
        let a = CMMotionManager(source: source)
        let b = CMMotionManager(source: source)
        a.gyroUpdateInterval = 0.1
        b.gyroUpdateInterval = 0.005
        a.startGyroUpdates()
        #expect(source.demand.rates[.gyro] == 10)
        b.startGyroUpdates()
        #expect(source.demand.rates[.gyro] == 200)
        b.stopGyroUpdates()
        #expect(await source.until { source.demand.rates[.gyro] == 10 })
        a.stopGyroUpdates()
        #expect(await source.until { source.demand.isEmpty })
    }

    @Test func changingTheIntervalWhileActiveTakesEffect() async {
        let source = ObservedSource()
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.01
        manager.startAccelerometerUpdates()
        manager.accelerometerUpdateInterval = 0.05
        #expect(await source.until { source.demand.rates[.accelerometer] == 20 })
    }
}
