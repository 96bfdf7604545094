import Foundation
import MotionFusion
import MotionRecorderStore
import MotionSources
@testable import OpenCoreMotion
import Testing

/// Accelerometer samples (g) of a walk at `cadence` steps/s: a vertical bounce with a heel-strike
/// harmonic and a lateral sway, phone upright in a pocket (y up).
private func walkSample(_ t: Double, cadence: Double) -> Vector3 {
    let phase = 2 * Double.pi * cadence * t
    let bounce = 0.25 * (sin(phase) + 0.3 * sin(2 * phase + 0.8))
    return Vector3(0.07 * sin(phase / 2), -1 - bounce, 0.05 * cos(phase))
}

private func temporaryDatabase() -> String {
    NSTemporaryDirectory() + "cm-\(UUID().uuidString)-pedometer.sqlite"
}

/// Stores `seconds` of a walk at 50 Hz in the recorder database at `path`, dated from `start`.
private func storeWalk(at path: String, start: Date, seconds: Double, cadence: Double) throws {
    let store = try RecordingStore(location: .file(path))
    let n = Int(seconds * 50)
    _ = try store.insert((0..<n).map { k in
        let t = Double(k) / 50
        let a = walkSample(t, cadence: cadence)
        return AccelerometerReading(date: start.addingTimeInterval(t), timestamp: 500 + t, x: a.x, y: a.y, z: a.z)
    })
}

@Suite struct PedometerTests {
    @Test func simulatedWalkGivesStepsAtItsCadence() async throws {
        let device = SimulatedDevice(scenario: .walk, seed: 5, clock: .virtual(startTime: 1000))
        let frequency = try #require(device.stepFrequency)
        let pedometer = CMPedometer(source: device, databasePath: temporaryDatabase())
        let updates = Recorder<CMPedometerData>()
        let start = Date()
        pedometer.startUpdates(from: start) { data, error in
            if let data { updates.append(data) }
            #expect(error == nil)
        }
        #expect(await updates.until { (updates.all.last?.numberOfSteps.intValue ?? 0) >= 200 })
        pedometer.stopUpdates()
        let all = updates.all
        let first = try #require(all.first), last = try #require(all.last)
        #expect(first.numberOfSteps.intValue >= 4, "a bout is confirmed by its first regular steps")
        #expect(zip(all.dropFirst(), all).allSatisfy { $0.numberOfSteps.intValue > $1.numberOfSteps.intValue })
        #expect(all.allSatisfy { $0.startDate == start })
        // Steps between the first and last update over the time between them: the walker's cadence.
        let steps = Double(last.numberOfSteps.intValue - first.numberOfSteps.intValue)
        let seconds = last.endDate.timeIntervalSince(first.endDate)
        #expect(abs(steps / seconds - frequency) < 0.03 * frequency, "\(steps / seconds) vs \(frequency) steps/s")
        let cadence = try #require(last.currentCadence?.doubleValue)
        #expect(abs(cadence - frequency) < 0.05 * frequency)
        let length = StepLengthModel().stepLength(cadence: frequency)
        let distance = try #require(last.distance?.doubleValue)
        #expect(abs(distance - Double(last.numberOfSteps.intValue) * length) < 0.03 * distance)
        let pace = try #require(last.currentPace?.doubleValue)
        #expect(abs(pace - 1 / (frequency * length)) < 0.06 * pace, "s/m")
        #expect(last.floorsAscended == nil && last.floorsDescended == nil, "no altimeter")
        let count = updates.count
        try? await Task.sleep(nanoseconds: 200_000_000)
        #expect(updates.count == count, "no handler call after stopUpdates returns")
    }

    @Test(arguments: [SimulationScenario.still, .handheld])
    func noStepsWithoutWalking(scenario: SimulationScenario) async {
        let device = SimulatedDevice(scenario: scenario, seed: 2, clock: .virtual(startTime: 1000))
        let pedometer = CMPedometer(source: device, databasePath: temporaryDatabase())
        let updates = Recorder<Int>()
        let events = Recorder<CMPedometerEventType>()
        pedometer.startUpdates(from: Date()) { data, _ in updates.append(data?.numberOfSteps.intValue ?? -1) }
        pedometer.startEventUpdates { event, _ in events.append(event?.type ?? .pause) }
        // Another consumer of the same stream shows how much simulated time has passed.
        let watcher = CMMotionManager(source: device)
        let seen = Recorder<Double>()
        watcher.startAccelerometerUpdates(to: serialQueue()) { data, _ in if let data { seen.append(data.timestamp) } }
        // Two simulated minutes of step detection: seconds alone, minutes under ThreadSanitizer on a loaded machine.
        #expect(await seen.until(giveUpAfter: 300) { (seen.all.last ?? 0) > 1120 })
        pedometer.stopUpdates()
        pedometer.stopEventUpdates()
        watcher.stopAccelerometerUpdates()
        #expect(updates.all.isEmpty && events.all.isEmpty, "2 minutes \(scenario): \(updates.all)")
    }

    @Test func eventsMarkPauseAndResume() async throws {
        let source = ObservedSource(sensors: [.accelerometer])
        let pedometer = CMPedometer(source: source, databasePath: temporaryDatabase())
        let events = Recorder<CMPedometerEvent>()
        let steps = Recorder<Int>()
        pedometer.startEventUpdates { event, _ in if let event { events.append(event) } }
        pedometer.startUpdates(from: Date()) { data, _ in steps.append(data?.numberOfSteps.intValue ?? -1) }
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 })
        // 20 s walking at 2 steps/s, 5 s standing, 10 s walking.
        for k in 0..<(35 * 50) {
            let t = Double(k) / 50
            let walking = t < 20 || t >= 25
            let a = walking ? walkSample(t, cadence: 2) : Vector3(0, -1, 0)
            _ = source.emit(RawSample(sensor: .accelerometer, timestamp: 100 + t, value: a))
        }
        // Standing again so the last bout is closed too.
        for k in 0..<(3 * 50) { _ = source.emit(accel(135 + Double(k) / 50)) }
        #expect(await events.until { events.count == 4 })
        pedometer.stopEventUpdates()
        pedometer.stopUpdates()
        let e = events.all
        #expect(e.map(\.type) == [.resume, .pause, .resume, .pause], "\(e.map { ($0.type.rawValue, $0.date.timeIntervalSince(e[0].date)) })")
        if e.count == 4 {
            let t0 = e[0].date
            // t0 is the first step, about half a second into the walk.
            #expect(e[1].date.timeIntervalSince(t0) > 18.5 && e[1].date.timeIntervalSince(t0) < 20, "paused at the last step \(e.map { $0.date.timeIntervalSince(t0) })")
            #expect(e[2].date.timeIntervalSince(e[1].date) > 5 && e[2].date.timeIntervalSince(e[1].date) < 6.5, "resumed at the first step")
            #expect(e[0].date < e[1].date && e[1].date < e[2].date && e[2].date < e[3].date)
        }
        #expect(abs((steps.all.last ?? 0) - 60) <= 2, "20 s + 10 s at 2 steps/s: \(steps.all.last ?? 0)")
    }

    @Test func historyComesFromTheRecorderStore() async throws {
        let path = temporaryDatabase()
        let walkStart = Date().addingTimeInterval(-600)
        try storeWalk(at: path, start: walkStart, seconds: 60, cadence: 2)
        let pedometer = CMPedometer(source: ManualSource(sensors: [.accelerometer]), databasePath: path)
        let results = Recorder<CMPedometerData>()
        pedometer.queryPedometerData(from: walkStart.addingTimeInterval(-60), to: Date()) { data, error in
            #expect(error == nil)
            if let data { results.append(data) }
        }
        pedometer.queryPedometerData(from: walkStart.addingTimeInterval(30), to: Date()) { data, _ in
            if let data { results.append(data) }
        }
        #expect(await results.until { results.count == 2 })
        let all = results.all
        #expect(all.count == 2)
        if all.count == 2 {
            #expect(abs(all[0].numberOfSteps.intValue - 120) <= 2, "60 s at 2 steps/s: \(all[0].numberOfSteps)")
            #expect(abs(all[1].numberOfSteps.intValue - 60) <= 2, "the last 30 s: \(all[1].numberOfSteps)")
            #expect(all[0].currentCadence == nil && all[0].currentPace == nil, "history has no current values")
            let distance = try #require(all[0].distance?.doubleValue)
            let length = StepLengthModel().stepLength(cadence: 2)
            #expect(abs(distance - 120 * length) < 0.05 * distance)
            let pace = try #require(all[0].averageActivePace?.doubleValue)
            #expect(abs(pace - 1 / (2 * length)) < 0.1 * pace)
        }
    }

    @Test func liveUpdatesFromAPastDateIncludeHistory() async throws {
        let path = temporaryDatabase()
        let walkStart = Date().addingTimeInterval(-300)
        try storeWalk(at: path, start: walkStart, seconds: 30, cadence: 2)
        let source = ObservedSource(sensors: [.accelerometer])
        let pedometer = CMPedometer(source: source, databasePath: path)
        let steps = Recorder<Int>()
        pedometer.startUpdates(from: walkStart) { data, _ in steps.append(data?.numberOfSteps.intValue ?? -1) }
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 })
        for k in 0..<(10 * 50) {
            let t = Double(k) / 50
            _ = source.emit(RawSample(sensor: .accelerometer, timestamp: 100 + t, value: walkSample(t, cadence: 2)))
        }
        #expect(await steps.until { (steps.all.last ?? 0) >= 78 })
        pedometer.stopUpdates()
        #expect(abs((steps.all.last ?? 0) - 80) <= 3, "60 recorded + 20 live: \(steps.all)")
    }

    @Test func errorsAreInCMErrorDomain() async throws {
        let pedometer = CMPedometer(source: ManualSource(sensors: [.accelerometer]), databasePath: temporaryDatabase())
        // Two pedometers deliver on queues of their own, so their errors are kept apart, not ordered.
        let invalid = Recorder<NSError>()
        pedometer.queryPedometerData(from: Date(), to: Date().addingTimeInterval(-10)) { data, error in
            #expect(data == nil)
            if let error { invalid.append(error as NSError) }
        }
        let unavailable = Recorder<NSError>(signalling: invalid.changes)
        let gyroOnly = CMPedometer(source: ManualSource(sensors: [.gyro]), databasePath: temporaryDatabase())
        gyroOnly.queryPedometerData(from: Date().addingTimeInterval(-10), to: Date()) { _, error in
            if let error { unavailable.append(error as NSError) }
        }
        gyroOnly.startUpdates(from: Date()) { _, error in
            if let error { unavailable.append(error as NSError) }
        }
        gyroOnly.startEventUpdates { _, error in
            if let error { unavailable.append(error as NSError) }
        }
        #expect(await invalid.until { invalid.count == 1 && unavailable.count == 3 })
        #expect((invalid.all + unavailable.all).allSatisfy { $0.domain == CMErrorDomain })
        #expect(invalid.all.map(\.code) == [Int(CMErrorInvalidParameter.rawValue)])
        #expect(unavailable.all.count == 3 && unavailable.all.allSatisfy { $0.code == Int(CMErrorMotionActivityNotAvailable.rawValue) })
    }

    @Test func aFailingSourceReachesTheHandlersOnce() async throws {
        let source = ObservedSource(sensors: [.accelerometer])
        let pedometer = CMPedometer(source: source, databasePath: temporaryDatabase())
        let errors = Recorder<NSError>()
        pedometer.startUpdates(from: Date()) { _, error in if let error { errors.append(error as NSError) } }
        pedometer.startEventUpdates { _, error in if let error { errors.append(error as NSError) } }
        #expect(await source.until { source.demand.rates[.accelerometer] == 50 })
        source.fail(SourceError(.deviceRemoved, "unplugged"))
        #expect(await errors.until { errors.count == 2 })
        try await Task.sleep(nanoseconds: 100_000_000)  // room for a wrong third call; holds no thread
        #expect(errors.count == 2 && errors.all.allSatisfy { $0.domain == CMErrorDomain && $0.code == Int(CMErrorNotAvailable.rawValue) })
    }

    @Test func asyncSequenceDeliversTheSameRecords() async throws {
        let device = SimulatedDevice(scenario: .walk, seed: 8, clock: .virtual(startTime: 1000))
        let pedometer = CMPedometer(source: device, databasePath: temporaryDatabase())
        var counts: [Int] = []
        for try await data in pedometer.updates(from: Date()) {
            counts.append(data.numberOfSteps.intValue)
            if counts.count == 5 { break }
        }
        #expect(counts.first.map { $0 >= 4 } == true && counts == counts.sorted())
        var events: [CMPedometerEventType] = []
        for try await event in pedometer.eventUpdates() {
            events.append(event.type)
            break
        }
        #expect(events == [.resume])
    }

    @Test func floorsComeFromTheBarometerWhileWalking() async throws {
        // The simulator's walk and its stairs barometer on one virtual clock: 10 s standing, 3 floors up,
        // 10 s on the top floor, 3 floors down (104 s). The walker walks throughout; only height counts.
        let device = SimulatedDevice(scenario: .walk, seed: 5, clock: .virtual(startTime: 2000))
        let barometer = SimulatedBarometerSource(scenario: .stairs, seed: 5, virtualStartTime: 2000)
        let pedometer = CMPedometer(source: device, barometer: barometer, databasePath: temporaryDatabase())
        let records = Recorder<CMPedometerData>()
        pedometer.startUpdates(from: Date()) { data, _ in if let data { records.append(data) } }
        #expect(await records.until { (records.all.last?.floorsDescended?.intValue ?? 0) >= 3 })
        pedometer.stopUpdates()
        let all = records.all
        #expect(all.allSatisfy { $0.floorsAscended != nil && $0.floorsDescended != nil })
        // The stairs go round again (10 s on the ground floor, then up): the virtual clocks run as fast
        // as they are read, so records of the next climb may come before the test's stop does (this
        // was the "floors up not 3" seen when this wait was awaited; a blocking wait only made the stop
        // quicker). The climb checked is the first one, up to the first record 3 floors down.
        let down = try #require(all.firstIndex { ($0.floorsDescended?.intValue ?? 0) >= 3 })
        #expect(all[down].floorsAscended?.intValue == 3 && all[down].floorsDescended?.intValue == 3)
        // Floors only grow, up before down.
        let ups = all[...down].compactMap { $0.floorsAscended?.intValue }
        #expect(ups == ups.sorted())
        let firstDown = try #require(all.firstIndex { ($0.floorsDescended?.intValue ?? 0) > 0 })
        #expect(all[firstDown].floorsAscended?.intValue == 3)
        // Without a barometer there are no floors.
        let plain = CMPedometer(source: SimulatedDevice(scenario: .walk, seed: 5, clock: .virtual(startTime: 0)),
                                databasePath: temporaryDatabase())
        let plainRecords = Recorder<CMPedometerData>()
        plain.startUpdates(from: Date()) { data, _ in if let data { plainRecords.append(data) } }
        #expect(await plainRecords.until { plainRecords.count >= 3 })
        plain.stopUpdates()
        #expect(plainRecords.all.allSatisfy { $0.floorsAscended == nil && $0.floorsDescended == nil })
    }
}
