// Allocations on the live path: one sample from a source to the app's handler, through the hub, the
// decimator, fusion and the operation queue, as `CMMotionManager` delivers it.
//
// The source is `ManualSource`, which hands each sample to the hub on the calling thread with no
// allocation of its own, so what is counted is the delivery path. Each iteration delivers
// `samplesPerIteration` samples and waits until the handler has seen every one of them; only that is
// measured (the manager, queue and source are set up before). The malloc counts are per iteration:
// divide by `samplesPerIteration` for the count per delivered sample. Names have no spaces: the
// threshold files are named after them.
import Benchmark
import Dispatch
import Foundation
import OpenCoreMotion

/// Samples per measured iteration: the counts below are per this many delivered samples.
let samplesPerIteration = 1_000

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal, .wallClock],
        warmupIterations: 2,
        maxDuration: .seconds(5),
        maxIterations: 50,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 5], absolute: [.p90: 50])]
    )

    // Bursts: the queue is held while a thousand samples arrive (an IIO buffer's watermark, a phone's
    // batch, a handler still busy), then released; the samples waiting share operations.
    Benchmark("AccelerometerHandlerBurst") { benchmark in
        deliver(benchmark, sensors: [.accelerometer]) { manager, queue, done in
            manager.accelerometerUpdateInterval = 0.001
            manager.startAccelerometerUpdates(to: queue) { data, _ in if data != nil { done() } }
        } stop: { $0.stopAccelerometerUpdates() }
    }

    Benchmark("DeviceMotionHandler6DBurst") { benchmark in
        deliver(benchmark, sensors: [.accelerometer, .gyro]) { manager, queue, done in
            manager.deviceMotionUpdateInterval = 0.001
            manager.startDeviceMotionUpdates(using: .xArbitraryZVertical, to: queue) { motion, _ in
                if motion != nil { done() }
            }
        } stop: { $0.stopDeviceMotionUpdates() }
    }

    // The handler keeping up: each sample is emitted after the previous one reached the handler, so
    // every sample costs a batch of its own on the queue (the worst case for push delivery; a burst
    // shares one batch among the samples waiting when it runs). On an app's queue a batch is an
    // operation, and Foundation's OperationQueue on Linux allocates 15 times per operation (its
    // locks, the work item and block that run it: see QueueDelivery); a wider tolerance, as a few
    // operations more or less are made per run depending on thread timing.
    Benchmark("AccelerometerHandlerPaced", configuration: .init(
        metrics: [.mallocCountTotal, .wallClock], warmupIterations: 2, maxDuration: .seconds(5), maxIterations: 50,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 10], absolute: [.p90: 2000])]
    )) { benchmark in
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        paced(benchmark, queue: queue)
    }

    // The same on OperationQueue.main, which Apple's examples use; this process serves the main queue
    // from dispatchMain()'s worker threads (Swift's async main), where only an operation makes the main
    // queue OperationQueue.current, so it costs an operation per batch as well.
    Benchmark("AccelerometerHandlerPacedMainQueue", configuration: .init(
        metrics: [.mallocCountTotal, .wallClock], warmupIterations: 2, maxDuration: .seconds(5), maxIterations: 50,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 10], absolute: [.p90: 2000])]
    )) { benchmark in
        paced(benchmark, queue: .main)
    }

    Benchmark("AccelerometerPull") { benchmark in
        let source = ManualSource(sensors: [.accelerometer])
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 0.001
        manager.startAccelerometerUpdates()
        var t = 0.0
        for _ in benchmark.scaledIterations {
            benchmark.startMeasurement()
            for _ in 0..<samplesPerIteration {
                t += 0.01
                source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1)))
            }
            benchmark.stopMeasurement()
            precondition(manager.accelerometerData?.timestamp == t, "the last sample was not kept")
        }
        manager.stopAccelerometerUpdates()
    }

    // The consuming task sleeps and wakes as the samples come, and each wake-up costs the concurrency
    // runtime an allocation or two: 1.0 to 1.4 per sample between runs here, so a wider tolerance.
    Benchmark("AccelerometerAsyncSequence", configuration: .init(
        metrics: [.mallocCountTotal, .wallClock], warmupIterations: 2, maxDuration: .seconds(5), maxIterations: 50,
        thresholds: [.mallocCountTotal: .init(relative: [.p90: 35], absolute: [.p90: 400])]
    )) { benchmark in
        let source = ManualSource(sensors: [.accelerometer])
        let manager = CMMotionManager(source: source)
        let counter = Counter()
        let task = Task {
            for try await _ in manager.accelerometerUpdates(interval: 0.001) { counter.arrived() }
        }
        while source.demand.isEmpty { usleep(1_000) }
        var t = 0.0
        for _ in benchmark.scaledIterations {
            counter.expect(samplesPerIteration)
            benchmark.startMeasurement()
            for _ in 0..<samplesPerIteration {
                t += 0.01
                source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1)))
            }
            counter.waitForAll()
            benchmark.stopMeasurement()
        }
        task.cancel()
    }
}

/// Emits `samplesPerIteration` accelerometer samples per iteration, each after the last reached the
/// handler on `queue`.
func paced(_ benchmark: Benchmark, queue: OperationQueue) {
    let source = ManualSource(sensors: [.accelerometer])
    let manager = CMMotionManager(source: source)
    let counter = Counter()
    manager.accelerometerUpdateInterval = 0.001
    manager.startAccelerometerUpdates(to: queue) { data, _ in if data != nil { counter.arrived() } }
    var t = 0.0
    for _ in benchmark.scaledIterations {
        benchmark.startMeasurement()
        for _ in 0..<samplesPerIteration {
            t += 0.01
            counter.expect(1)
            source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1)))
            counter.waitForAll()
        }
        benchmark.stopMeasurement()
    }
    manager.stopAccelerometerUpdates()
}

/// Runs `samplesPerIteration` samples of `sensors` through a manager set up by `start` while its queue
/// is suspended, then resumes the queue and waits for each iteration's deliveries to reach the handler (`start` gets the function its handler calls per
/// delivery).
func deliver(_ benchmark: Benchmark, sensors: Set<SensorKind>,
             start: (CMMotionManager, OperationQueue, @escaping @Sendable () -> Void) -> Void,
             stop: (CMMotionManager) -> Void) {
    let source = ManualSource(sensors: sensors)
    let manager = CMMotionManager(source: source)
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    let counter = Counter()
    start(manager, queue) { counter.arrived() }
    let gyroscope = sensors.contains(.gyro)
    var t = 0.0
    for _ in benchmark.scaledIterations {
        counter.expect(samplesPerIteration)
        benchmark.startMeasurement()
        queue.isSuspended = true
        for _ in 0..<samplesPerIteration {
            t += 0.01
            // The accelerometer first: fusion delivers device motion on each gyroscope sample that
            // follows an accelerometer reading.
            source.emit(RawSample(sensor: .accelerometer, timestamp: t, value: Vector3(0, 0, -1)))
            if gyroscope { source.emit(RawSample(sensor: .gyro, timestamp: t, value: Vector3(0, 0, 0.1))) }
        }
        queue.isSuspended = false
        counter.waitForAll()
        benchmark.stopMeasurement()
    }
    stop(manager)
}

/// Counts deliveries and lets the benchmark thread wait for an expected number (30 s at most: a
/// benchmark that loses samples must fail, not hang).
final class Counter: @unchecked Sendable {
    // Sendable: every member is read and written under `condition`.
    private let condition = NSCondition()
    private var remaining = 0

    func expect(_ count: Int) {
        condition.lock(); remaining = count; condition.unlock()
    }

    func arrived() {
        condition.lock()
        remaining -= 1
        if remaining <= 0 { condition.signal() }
        condition.unlock()
    }

    func waitForAll() {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 30)
        while remaining > 0 {
            precondition(condition.wait(until: deadline), "\(remaining) deliveries never arrived")
        }
    }
}
