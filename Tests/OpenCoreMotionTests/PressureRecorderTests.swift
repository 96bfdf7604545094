import Foundation
import MotionRecorderStore
import MotionSources
import MotionSourcesLinux
import MotionSourcesLinuxTesting
@testable import OpenCoreMotion
import Testing

private func temporaryDatabase() -> String {
    NSTemporaryDirectory() + "cm-\(UUID().uuidString)-pressure.sqlite"
}

/// A barometer on a virtual clock answering from a script: one entry per read, in order (`nil`
/// throws `.deviceRemoved`); past the script it repeats the last value.
private final class ScriptedBarometer: BarometerSource {
    let identifier = "test:scripted"
    let name = "Scripted barometer"
    let virtualStartTime: Double?
    private let script: [Double?]
    private let temperature: Double?
    private let reads = Locked(0)

    init(start: Double, script: [Double?], temperature: Double? = nil) {
        virtualStartTime = start
        self.script = script
        self.temperature = temperature
    }

    func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        let k = reads.withLock { r in defer { r += 1 }; return r }
        guard let value = script[min(k, script.count - 1)] else {
            throw SourceError(.deviceRemoved, "gone", path: nil)
        }
        return value
    }

    func readTemperature(at timestamp: Double) -> Double? { temperature }

    var readCount: Int { reads.withLock { $0 } }
}

/// Pressure recording (beyond Apple: SensorKit's `CMRecordedPressureData`).
@Suite struct PressureRecorderTests {
    private func recorder(_ barometer: (any BarometerSource)?, _ path: String = temporaryDatabase()) -> CMSensorRecorder {
        CMSensorRecorder(optionalSource: nil, databasePath: path, barometer: barometer, usesDefaultBarometer: false)
    }

    @Test func recordsTheSimulatedStairsOnceASecondOnAVirtualClock() async throws {
        let start = ProcessInfo.processInfo.systemUptime
        let barometer = SimulatedBarometerSource(scenario: .stairs, seed: 3, virtualStartTime: start)
        let path = temporaryDatabase()
        let recorder = recorder(barometer, path)
        let requested = Date()
        recorder.recordPressure(forDuration: 120)
        #expect(await eventually(timeout: 60) { !recorder.isRecording(.pressure) }, "120 s of virtual time end as soon as read")

        let samples = try #require(recorder.pressureData(from: requested.addingTimeInterval(-5), to: requested.addingTimeInterval(600)))
        #expect(samples.count == 120, "120 s at 1 Hz")
        #expect(samples.first?.timestamp == start, "from the first reading")
        let steps = zip(samples.dropFirst(), samples).map { $0.timestamp - $1.timestamp }
        #expect(steps.allSatisfy { abs($0 - 1) < 1e-9 }, "one reading a second, none missing, in order")
        let offsets = samples.map { $0.startDate.timeIntervalSince1970 - $0.timestamp }
        #expect(offsets.allSatisfy { abs($0 - offsets[0]) < 1e-6 }, "startDate is timestamp on the wall clock")
        if let first = samples.first { #expect(abs(first.startDate.timeIntervalSince(requested)) < 1) }

        // The scenario's pressure: the same barometer without its 2 Pa noise, within 6 σ.
        let truth = SimulatedBarometer(scenario: .stairs, seed: 3, startTime: start)
        let kPa = samples.map { $0.pressure.converted(to: .kilopascals).value }
        let errors = zip(samples, kPa).map { abs($1 - truth.pressureWithoutNoise(at: $0.timestamp)) }
        #expect(errors.allSatisfy { $0 < 0.012 }, "largest error \(errors.max() ?? 0) kPa")
        // Three floors (9 m) up the stairs by 52 s, about 0.107 kPa less; the top is held until 62 s.
        guard samples.count == 120 else { return }
        #expect(kPa[0] - kPa[60] > 0.08 && kPa[0] - kPa[60] < 0.13, "9 m climbed: \(kPa[0] - kPa[60]) kPa")
        #expect(samples.allSatisfy { $0.temperature.unit == .celsius && $0.temperature.value == SimulatedBarometerSource.ambientTemperature })
        #expect(zip(samples.dropFirst(), samples).allSatisfy { $0.identifier >= $1.identifier } && samples.last!.identifier > samples[0].identifier,
                "batch identifiers grow")
        let store = try ActiveRecordings.store(at: path)
        #expect(try store.sessions(sensor: .pressure).map(\.source) == ["sim:stairs"])
        #expect(try store.sessions().isEmpty && store.sampleCount() == 0, "no accelerometer was recorded")
    }

    /// NaN and ∞ readings are dropped, an unknown temperature surfaces as NaN °C, the range is
    /// `(from, to]`, and a read that throws ends the recording long before its duration.
    @Test func badReadingsAreDroppedAndAFailedReadEndsTheRecording() async throws {
        let start = ProcessInfo.processInfo.systemUptime.rounded(.down)
        let barometer = ScriptedBarometer(start: start, script: [100, .nan, 100.5, .infinity, 101, -.infinity, 101.5, 102, nil, 103])
        let recorder = recorder(barometer)
        recorder.recordPressure(forDuration: 3600)
        #expect(await eventually(timeout: 60) { !recorder.isRecording(.pressure) }, "the failed read ended it")
        #expect(barometer.readCount == 9, "no read after the failure")
        let window = (Date().addingTimeInterval(-3600), Date().addingTimeInterval(3600))
        let samples = try #require(recorder.pressureData(from: window.0, to: window.1))
        #expect(samples.map { $0.pressure.converted(to: .kilopascals).value } == [100, 100.5, 101, 101.5, 102])
        #expect(samples.map(\.timestamp) == [0, 2, 4, 6, 7].map { start + Double($0) })
        #expect(samples.allSatisfy { $0.temperature.value.isNaN && $0.temperature.unit == .celsius }, "unknown temperature")
        guard samples.count == 5 else { return }
        #expect(recorder.pressureData(from: samples[1].startDate, to: samples[3].startDate)?.map(\.timestamp) == [start + 4, start + 6],
                "the start excluded, the end included")
        #expect(recorder.pressureData(from: window.0.addingTimeInterval(-12 * 3600), to: window.1) == nil, "more than 12 hours")
        #expect(recorder.pressureData(from: window.1, to: window.0) == nil, "backwards")
    }

    @Test func withoutABarometerNothingIsRecorded() async throws {
        #expect(!CMSensorRecorder.canRecordPressure(from: nil))
        #expect(CMSensorRecorder.canRecordPressure(from: SimulatedBarometerSource(scenario: .still, virtualStartTime: 0)))
        let path = temporaryDatabase()
        let none = recorder(nil, path)
        none.recordPressure(forDuration: 10)
        #expect(!none.isRecording(.pressure), "no barometer")
        #expect(none.pressureData(from: Date().addingTimeInterval(-3600), to: Date())?.isEmpty == true)
        #expect(try ActiveRecordings.store(at: path).sessions(sensor: .pressure).isEmpty, "no session was stored")
        let barometer = ScriptedBarometer(start: 0, script: [100])
        let idle = recorder(barometer)
        idle.recordPressure(forDuration: 0)
        idle.recordPressure(forDuration: .nan)
        idle.recordPressure(forDuration: -5)
        #expect(!idle.isRecording(.pressure) && barometer.readCount == 0)
    }

    /// An IIO pressure chip (the in-memory sysfs twin) with a temperature channel: the temperature,
    /// milli °C in sysfs, reaches the recorded samples in °C; a chip without one reports none.
    @Test func iioTemperatureIsReadInDegreesCelsiusAndRecorded() async throws {
        let fs = InMemoryLinuxFileSystem()
        let base = "/sys/bus/iio/devices/"
        fs.setFile(base + "iio:device0/name", "bmp280\n")
        fs.setFile(base + "iio:device0/in_pressure_input", "100.512340000\n")
        fs.setFile(base + "iio:device0/in_temp_input", "21500\n")
        fs.setFile(base + "iio:device1/name", "lps22hb\n")
        fs.setFile(base + "iio:device1/in_pressure_raw", "4116480\n")
        fs.setFile(base + "iio:device1/in_pressure_scale", "0.000024414\n")
        fs.setFile(base + "iio:device1/in_temp_raw", "2560\n")
        fs.setFile(base + "iio:device1/in_temp_scale", "10\n")
        fs.setFile(base + "iio:device1/in_temp_offset", "-100\n")
        fs.setFile(base + "iio:device2/name", "ms5611\n")
        fs.setFile(base + "iio:device2/in_pressure_input", "99.9\n")
        let sensors = LinuxBarometers.scan(sysfsRoot: "/sys", fileSystem: fs).sensors
        #expect(sensors.map(\.identifier) == ["iio:bmp280", "iio:lps22hb", "iio:ms5611"])
        guard sensors.count == 3 else { return }
        #expect(sensors[0].readTemperature(at: 0) == 21.5)
        #expect(sensors[1].readTemperature(at: 0) == 24.6, "(raw + offset) × scale milli °C")
        #expect(sensors[2].readTemperature(at: 0) == nil, "no temperature channel")
        fs.setFile(base + "iio:device0/in_temp_input", "hot\n")
        #expect(sensors[0].readTemperature(at: 0) == nil, "not a number")
        fs.setFile(base + "iio:device0/in_temp_input", "21500\n")

        // Recorded in real time: readings at t₀ and t₀ + 1 s, then the 1.5 s are over.
        let recorder = recorder(sensors[0])
        recorder.recordPressure(forDuration: 1.5)
        #expect(await eventually(timeout: 60) { !recorder.isRecording(.pressure) })
        let samples = try #require(recorder.pressureData(from: Date().addingTimeInterval(-3600), to: Date().addingTimeInterval(60)))
        #expect(samples.count == 2)
        #expect(samples.allSatisfy { abs($0.pressure.converted(to: .kilopascals).value - 100.51234) < 1e-9 })
        #expect(samples.allSatisfy { $0.temperature.converted(to: .celsius).value == 21.5 })
    }
}
