import Foundation
import MotionFusion
import MotionRecorderStore
import MotionSources
@testable import OpenCoreMotion
import Testing

private func temporaryDatabase() -> String {
    NSTemporaryDirectory() + "cm-\(UUID().uuidString)-recorder.sqlite"
}

@Suite struct SensorRecorderTests {
    @Test func recordsFiftyHertzForTheDurationFromASimulatorOnAVirtualClock() async throws {
        let start = ProcessInfo.processInfo.systemUptime
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: start))
        let path = temporaryDatabase()
        let recorder = CMSensorRecorder(source: device, databasePath: path)
        let requested = Date()
        recorder.recordAccelerometer(forDuration: 60)
        #expect(await eventually(timeout: 60) { !recorder.isRecording }, "60 s of virtual time end as soon as generated")

        let list = try #require(recorder.accelerometerData(from: requested.addingTimeInterval(-5), to: requested.addingTimeInterval(600)))
        let samples = list.samples
        #expect(samples.count == 3000, "60 s at 50 Hz")
        #expect(samples.first?.timestamp == start, "from the first sample")
        let steps = zip(samples.dropFirst(), samples).map { $0.timestamp - $1.timestamp }
        #expect(steps.allSatisfy { abs($0 - 0.02) < 1e-9 }, "one sample every 20 ms, none missing, in order")
        let offsets = samples.map { $0.startDate.timeIntervalSince1970 - $0.timestamp }
        #expect(offsets.allSatisfy { abs($0 - offsets[0]) < 1e-6 }, "startDate is timestamp on the wall clock")
        #expect(abs(samples[0].startDate.timeIntervalSince(requested)) < 1)
        #expect(samples.allSatisfy { abs($0.acceleration.z + 1) < 0.02 }, "lying still, face up")
        let ids = samples.map(\.identifier)
        #expect(ids == ids.sorted() && Set(ids).count > 1, "several batches, in order")

        let other = CMSensorRecorder(source: device, databasePath: path)
        #expect(other.accelerometerData(from: requested.addingTimeInterval(-5), to: requested.addingTimeInterval(600))?.samples.count == 3000,
                "another recorder on the same database sees the recording")
    }

    /// Apple's reference for `accelerometerData(from:to:)` calls both dates inclusive ("Entries
    /// occurring before this date are excluded", "after this date are excluded"), so a query whose ends
    /// are two samples' own dates returns both of them and everything between, nothing else.
    /// `CMSensorRecorder.h`: "a time range (fromDate, toDate]".
    @Test func theQueryRangeExcludesItsStartAndIncludesItsEndAsApplesHeaderSays() async throws {
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: ProcessInfo.processInfo.systemUptime))
        let recorder = CMSensorRecorder(source: device, databasePath: temporaryDatabase())
        let requested = Date()
        recorder.recordAccelerometer(forDuration: 2)
        #expect(await eventually(timeout: 60) { !recorder.isRecording })
        let all = try #require(recorder.accelerometerData(from: requested.addingTimeInterval(-5), to: requested.addingTimeInterval(60))).samples
        #expect(all.count == 100, "2 s at 50 Hz")
        guard all.count == 100 else { return }
        let ids = { (list: CMSensorDataList?) in list?.samples.map(\.identifier) ?? [] }
        let stamps = { (list: CMSensorDataList?) in list?.samples.map(\.timestamp) ?? [] }
        let inside = recorder.accelerometerData(from: all[10].startDate, to: all[20].startDate)
        #expect(stamps(inside) == all[11...20].map(\.timestamp), "samples 11…20: the start excluded, the end included")
        #expect(ids(inside) == all[11...20].map(\.identifier))
        let justInside = recorder.accelerometerData(from: all[10].startDate.addingTimeInterval(0.001),
                                                    to: all[20].startDate.addingTimeInterval(-0.001))
        #expect(stamps(justInside) == all[11...19].map(\.timestamp), "a millisecond in from each end drops the end")
        let justBefore = recorder.accelerometerData(from: all[10].startDate.addingTimeInterval(-0.001), to: all[20].startDate)
        #expect(stamps(justBefore) == all[10...20].map(\.timestamp), "a millisecond before a sample takes it in")
        let single = recorder.accelerometerData(from: all[42].startDate, to: all[42].startDate)
        #expect(stamps(single) == [], "(d, d] is empty")
        // Consecutive ranges return each sample once.
        let first = recorder.accelerometerData(from: all[0].startDate, to: all[50].startDate)
        let second = recorder.accelerometerData(from: all[50].startDate, to: all[99].startDate)
        #expect(stamps(first) + stamps(second) == all[1...99].map(\.timestamp))
    }

    @Test func callingAgainWhileRecordingExtendsTheRecording() async throws {
        let source = ObservedSource(sensors: [.accelerometer])
        let path = temporaryDatabase()
        let recorder = CMSensorRecorder(source: source, databasePath: path)
        recorder.recordAccelerometer(forDuration: 1)
        #expect(recorder.isRecording)
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 }, "Apple's 50 Hz")
        // 32 samples a second (binary-exact times, each at least Apple's 20 ms apart), starting now on
        // the uptime clock: dates derive from timestamps, and the query below covers the last hour.
        let base = ProcessInfo.processInfo.systemUptime.rounded(.down)
        for k in 0..<25 { source.emit(accel(base + Double(k) / 32)) }
        #expect(await eventually { ActiveRecordings.lastTimestamp(databasePath: path) == base + 24.0 / 32 })
        recorder.recordAccelerometer(forDuration: 1)
        for k in 25..<200 { source.emit(accel(base + Double(k) / 32)) }
        #expect(await eventually { !recorder.isRecording })
        let list = try #require(recorder.accelerometerData(from: Date().addingTimeInterval(-3600), to: Date().addingTimeInterval(3600)))
        #expect(list.samples.map(\.timestamp) == (0..<56).map { base + Double($0) / 32 },
                "1 s from the first sample, extended to 1 s after the 25th (0.75 s): samples 0…55")
        #expect(try ActiveRecordings.store(at: path).sessions().count == 1, "extended, not started twice")
    }

    @Test func samplesStillBufferedAreWrittenWhenTheProcessExits() async throws {
        let source = ObservedSource(sensors: [.accelerometer])
        let path = temporaryDatabase()
        let recorder = CMSensorRecorder(source: source, databasePath: path)
        recorder.recordAccelerometer(forDuration: 60)
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 })
        // Ten samples, 0.18 s: fewer than a batch and less than its half second, so none is written yet.
        let base = ProcessInfo.processInfo.systemUptime.rounded(.down)
        for k in 0..<10 { source.emit(accel(base + Double(k) / 50)) }
        #expect(await eventually { ActiveRecordings.lastTimestamp(databasePath: path) == base + 9.0 / 50 })
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3600))
        #expect(recorder.accelerometerData(from: window.0, to: window.1)?.samples.isEmpty == true, "still buffered")
        // What the atexit hook runs (for this database only: other tests record in parallel).
        ActiveRecordings.finishAll(databasePath: path)
        let list = try #require(recorder.accelerometerData(from: window.0, to: window.1))
        #expect(list.samples.map(\.timestamp) == (0..<10).map { base + Double($0) / 50 })
        source.emit(accel(base + 10.0 / 50))
        #expect(await eventually { !recorder.isRecording }, "the recording is over")
        #expect(recorder.accelerometerData(from: window.0, to: window.1)?.samples.count == 10, "nothing after the end")
    }

    @Test func queriesOfMoreThanTwelveHoursOrBackwardsGiveNil() {
        let recorder = CMSensorRecorder(source: ManualSource(), databasePath: temporaryDatabase())
        let now = Date()
        #expect(recorder.accelerometerData(from: now.addingTimeInterval(-12 * 3600 - 1), to: now) == nil)
        #expect(recorder.accelerometerData(from: now, to: now.addingTimeInterval(-1)) == nil)
        #expect(recorder.accelerometerData(from: now.addingTimeInterval(-12 * 3600), to: now)?.samples.isEmpty == true)
    }

    @Test func aCorruptDatabaseRecordsNothingAndQueriesGiveNil() throws {
        let path = temporaryDatabase()
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: path))
        let source = ManualSource(sensors: [.accelerometer])
        let recorder = CMSensorRecorder(source: source, databasePath: path)
        recorder.recordAccelerometer(forDuration: 10)
        #expect(!recorder.isRecording)
        #expect(source.demand.isEmpty, "the sensor was never started")
        #expect(recorder.accelerometerData(from: Date().addingTimeInterval(-60), to: Date()) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x42, count: 4096), "the file is left alone")
    }

    @Test func nothingIsRecordedWithoutAnAccelerometerOrDuration() {
        let gyroOnly = ManualSource(sensors: [.gyro])
        let recorder = CMSensorRecorder(source: gyroOnly, databasePath: temporaryDatabase())
        recorder.recordAccelerometer(forDuration: 10)
        #expect(!recorder.isRecording)
        let source = ManualSource(sensors: [.accelerometer])
        let idle = CMSensorRecorder(source: source, databasePath: temporaryDatabase())
        idle.recordAccelerometer(forDuration: 0)
        idle.recordAccelerometer(forDuration: .nan)
        #expect(!idle.isRecording && source.demand.isEmpty)
    }

    // The class methods read the process's default source, which is resolved once per process; the
    // Apple listings choose it, so these tests look at the rule through explicit sources instead.
    @Test func authorizationCoversEveryRecordedSensorWithApplesRawValues() {
        #expect(CMSensorRecorder.authorizationStatus(for: ManualSource(sensors: [.accelerometer])) == .authorized)
        #expect(CMSensorRecorder.authorizationStatus(for: ManualSource(sensors: [.gyro])) == .authorized,
                "rotation rate can be recorded")
        #expect(CMSensorRecorder.authorizationStatus(for: ManualSource(sensors: [.magnetometer])) == .restricted,
                "nothing the recorder records")
        #expect(CMSensorRecorder.authorizationStatus(for: nil) == .restricted)
        #expect(CMSensorRecorder.canRecord(from: SimulatedDevice(scenario: .still)))
        #expect(CMSensorRecorder.canRecordRotationRate(from: SimulatedDevice(scenario: .still)))
        #expect(!CMSensorRecorder.canRecord(from: ManualSource(sensors: [.gyro])))
        #expect(!CMSensorRecorder.canRecordRotationRate(from: ManualSource(sensors: [.accelerometer])))
        #expect([CMAuthorizationStatus.notDetermined, .restricted, .denied, .authorized].map(\.rawValue) == [0, 1, 2, 3])
    }

    @Test func fastEnumerationHandsOutEverySampleInOrder() {
        let samples: [CMRecordedAccelerometerData] = (0..<37).map { (k: Int) -> CMRecordedAccelerometerData in
            let t = Double(k)
            return CMRecordedAccelerometerData(
                identifier: UInt64(k / 10), startDate: Date(timeIntervalSince1970: t),
                acceleration: CMAcceleration(x: t, y: 0, z: -1), timestamp: t
            )
        }
        let list = CMSensorDataList(samples: samples)
        var iterator = NSFastEnumerationIterator(list)
        var seen: [Double] = []
        while let next = iterator.next() {
            guard let data = next as? CMRecordedAccelerometerData else { Issue.record("not a sample: \(next)"); break }
            seen.append(data.acceleration.x)
        }
        #expect(seen == (0..<37).map(Double.init))
        var empty = NSFastEnumerationIterator(CMSensorDataList(samples: []))
        #expect(empty.next() == nil)
    }

    // MARK: Rotation rate (beyond Apple: SensorKit's CMRecordedRotationRateData)

    @Test func recordsRotationRateAtFiftyHertzFromASimulatorOnAVirtualClock() async throws {
        let start = ProcessInfo.processInfo.systemUptime
        let device = SimulatedDevice(scenario: .still, clock: .virtual(startTime: start))
        let path = temporaryDatabase()
        let recorder = CMSensorRecorder(source: device, databasePath: path)
        let requested = Date()
        recorder.recordRotationRate(forDuration: 10)
        #expect(await eventually(timeout: 60) { !recorder.isRecording(.rotationRate) })

        let window = (requested.addingTimeInterval(-5), requested.addingTimeInterval(600))
        let samples = try #require(recorder.rotationRateData(from: window.0, to: window.1))
        #expect(samples.count == 500, "10 s at 50 Hz")
        #expect(samples.first?.timestamp == start, "from the first sample")
        let steps = zip(samples.dropFirst(), samples).map { $0.timestamp - $1.timestamp }
        #expect(steps.allSatisfy { abs($0 - 0.02) < 1e-9 }, "one sample every 20 ms, none missing, in order")
        let offsets = samples.map { $0.startDate.timeIntervalSince1970 - $0.timestamp }
        #expect(offsets.allSatisfy { abs($0 - offsets[0]) < 1e-6 }, "startDate is timestamp on the wall clock")
        // Lying still: only the gyroscope's noise and bias, far below a slow turn (0.1 rad/s).
        #expect(samples.allSatisfy { abs($0.rotationRate.x) < 0.1 && abs($0.rotationRate.y) < 0.1 && abs($0.rotationRate.z) < 0.1 })
        #expect(Set(samples.map(\.rotationRate.x)).count > 1, "real readings, not a constant")
        #expect(recorder.accelerometerData(from: window.0, to: window.1)?.samples.isEmpty == true, "no accelerometer was recorded")
        #expect(try ActiveRecordings.store(at: path).sessions(sensor: .rotationRate).map(\.source) == [device.info.identifier])
    }

    /// The values stored are the gyroscope's, exactly, and the range is `(from, to]` as the accelerometer's.
    @Test func rotationRateIsStoredExactlyAndQueriedOverTheSameRange() async throws {
        let source = ManualSource(sensors: [.accelerometer, .gyro])
        let recorder = CMSensorRecorder(source: source, databasePath: temporaryDatabase())
        recorder.recordRotationRate(forDuration: 1)
        #expect(await eventually { source.demand.rates[.gyro] == 50 }, "Apple's recorder rate, 50 Hz")
        #expect(source.demand.rates[.accelerometer] == nil, "the accelerometer is not started")
        let base = ProcessInfo.processInfo.systemUptime.rounded(.down)
        let value = { (k: Int) in Vector3(Double(k) / 8, -Double(k) / 16, 0.5) }
        for k in 0..<40 { source.emit(gyro(base + Double(k) / 32, value(k))) }
        #expect(await eventually { !recorder.isRecording(.rotationRate) }, "1 s after the first sample")
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3600))
        let all = try #require(recorder.rotationRateData(from: window.0, to: window.1))
        #expect(all.map(\.timestamp) == (0..<32).map { base + Double($0) / 32 })
        #expect(all.map { Vector3($0.rotationRate.x, $0.rotationRate.y, $0.rotationRate.z) } == (0..<32).map(value))
        guard all.count == 32 else { return }
        let inside = recorder.rotationRateData(from: all[10].startDate, to: all[20].startDate)
        #expect(inside?.map(\.timestamp) == all[11...20].map(\.timestamp), "the start excluded, the end included")
        #expect(recorder.rotationRateData(from: all[5].startDate, to: all[5].startDate)?.isEmpty == true, "(d, d] is empty")
    }

    /// NaN readings and timestamps going backwards: the rotation-rate path keeps exactly what the
    /// accelerometer path keeps from the same input.
    @Test(arguments: [SensorKind.accelerometer, .gyro])
    func badReadingsAreDroppedAsTheAccelerometerDropsThem(sensor: SensorKind) async throws {
        let source = ManualSource(sensors: [sensor])
        let recorder = CMSensorRecorder(source: source, databasePath: temporaryDatabase())
        let kind: RecordedSensor = sensor == .gyro ? .rotationRate : .accelerometer
        if sensor == .gyro { recorder.recordRotationRate(forDuration: 1) } else { recorder.recordAccelerometer(forDuration: 1) }
        #expect(await eventually { source.demand.rates[sensor] == 50 })
        let base = ProcessInfo.processInfo.systemUptime.rounded(.down)
        let emit = { (t: Double, v: Vector3) in _ = source.emit(RawSample(sensor: sensor, timestamp: base + t, value: v)) }
        for k in 0..<10 { emit(Double(k) / 32, Vector3(0, 0, k == 3 || k == 6 ? .nan : -1)) }
        emit(2.5 / 32, Vector3(0, 0, -1))   // backwards, after 9/32
        emit(5.0 / 32, Vector3(0, 0, -1))   // a repeat of an earlier time
        emit(10.0 / 32, Vector3(.infinity, 0, -1))
        for k in 11..<40 { emit(Double(k) / 32, Vector3(0, 0, -1)) }
        #expect(await eventually { !recorder.isRecording(kind) })
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3600))
        let stamps = sensor == .gyro
            ? recorder.rotationRateData(from: window.0, to: window.1)?.map(\.timestamp)
            : recorder.accelerometerData(from: window.0, to: window.1)?.samples.map(\.timestamp)
        let expected = (0..<32).filter { ![3, 6, 10].contains($0) }.map { base + Double($0) / 32 }
        #expect(stamps == expected, "non-finite readings and earlier times are not stored; order kept")
    }

    @Test func rotationRateAndAccelerometerRecordIndependentlyIntoOneDatabase() async throws {
        let source = ManualSource(sensors: [.accelerometer, .gyro])
        let path = temporaryDatabase()
        let recorder = CMSensorRecorder(source: source, databasePath: path)
        recorder.recordAccelerometer(forDuration: 1)
        recorder.recordRotationRate(forDuration: 0.5)
        #expect(recorder.isRecording && recorder.isRecording(.rotationRate))
        #expect(await eventually { source.demand.rates[.gyro] == 50 && source.demand.rates[.accelerometer] == 50 })
        let base = ProcessInfo.processInfo.systemUptime.rounded(.down)
        for k in 0..<20 { source.emit(gyro(base + Double(k) / 32, Vector3(1, 2, 3))) }
        #expect(await eventually { !recorder.isRecording(.rotationRate) }, "the 0.5 s rotation-rate recording is over")
        #expect(recorder.isRecording, "the accelerometer's goes on")
        for k in 0..<40 { source.emit(accel(base + Double(k) / 32)) }
        #expect(await eventually { !recorder.isRecording })
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3600))
        #expect(recorder.rotationRateData(from: window.0, to: window.1)?.count == 16, "0.5 s at 32 Hz")
        #expect(recorder.accelerometerData(from: window.0, to: window.1)?.samples.count == 32, "1 s at 32 Hz")
        let store = try ActiveRecordings.store(at: path)
        #expect(try store.sessions().count == 1 && store.sessions(sensor: .rotationRate).count == 1)
    }

    @Test func rotationRateQueriesOfMoreThanTwelveHoursOrBackwardsGiveNilAndNothingIsRecordedWithoutAGyro() async {
        let recorder = CMSensorRecorder(source: ManualSource(sensors: [.accelerometer]), databasePath: temporaryDatabase())
        let now = Date()
        #expect(recorder.rotationRateData(from: now.addingTimeInterval(-12 * 3600 - 1), to: now) == nil)
        #expect(recorder.rotationRateData(from: now, to: now.addingTimeInterval(-1)) == nil)
        #expect(recorder.rotationRateData(from: now.addingTimeInterval(-12 * 3600), to: now)?.isEmpty == true)
        recorder.recordRotationRate(forDuration: 10)
        #expect(!recorder.isRecording(.rotationRate), "no gyroscope")
        let source = ManualSource(sensors: [.gyro])
        let idle = CMSensorRecorder(source: source, databasePath: temporaryDatabase())
        idle.recordRotationRate(forDuration: 0)
        idle.recordRotationRate(forDuration: .nan)
        idle.recordRotationRate(forDuration: -5)
        #expect(!idle.isRecording(.rotationRate) && source.demand.isEmpty)
    }
}
