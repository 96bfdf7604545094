import Foundation
import MotionSources
import MotionSourcesLinux
@testable import OpenCoreMotion
import MotionSourcesLinuxTesting
import MotionTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct AltimeterTests {
    /// Collects `count` relative-altitude updates from `barometer`.
    func updates(_ barometer: any BarometerSource, count: Int) async -> [CMAltitudeData] {
        let altimeter = CMAltimeter(barometer: barometer)
        let out = Recorder<CMAltitudeData>()
        altimeter.startRelativeAltitudeUpdates(to: serialQueue()) { data, error in
            #expect(error == nil)
            if let data { out.append(data) }
        }
        _ = await out.until { out.count >= count }
        altimeter.stopRelativeAltitudeUpdates()
        return Array(out.all.prefix(count))
    }

    @Test func isaRoundTripAndNoise() {
        #expect(abs(SimulatedBarometer.pressure(altitude: 0, seaLevel: 101.325) - 101.325) < 1e-12)
        for h in [-100.0, 0, 3, 30, 500, 2000] {
            #expect(abs(SimulatedBarometer.altitude(pressure: SimulatedBarometer.pressure(altitude: h, seaLevel: 100.8), seaLevel: 100.8) - h) < 1e-6)
        }
        // 1 floor (3 m) is about 36 Pa near sea level.
        let floor = SimulatedBarometer.pressure(altitude: 0, seaLevel: 101.325) - SimulatedBarometer.pressure(altitude: 3, seaLevel: 101.325)
        #expect(abs(floor - 0.036) < 0.001)
        var b = SimulatedBarometer(scenario: .still, seed: 4)
        let readings = (0..<2000).map { b.sample(at: Double($0) * 0.04) - b.pressureWithoutNoise(at: Double($0) * 0.04) }
        let rms = (readings.map { $0 * $0 }.reduce(0, +) / Double(readings.count)).squareRoot()
        #expect(abs(rms - 0.002) < 0.0003, "2 Pa rms white noise: \(rms)")
    }

    @Test(arguments: [(BarometerScenario.stairs, 9.0), (.lift, 30.0)])
    func relativeAltitudeFollowsTheScenario(scenario: BarometerScenario, top: Double) async throws {
        let source = SimulatedBarometerSource(scenario: scenario, seed: 3, virtualStartTime: 100)
        let data = await updates(source, count: 150)
        #expect(data.count == 150)
        let reference = source.altitude(at: 100 + 1) // the first second's mean altitude ≈ its middle
        var worst = 0.0
        for d in data {
            // Each update is the mean over the second before its timestamp.
            let truth = source.altitude(at: d.timestamp - 0.5) - reference
            worst = max(worst, abs(d.relativeAltitude.doubleValue - truth))
        }
        #expect(worst < 0.8, "worst error \(worst) m")
        let highest = data.map { $0.relativeAltitude.doubleValue }.max() ?? 0
        #expect(abs(highest - top) < 0.8, "reaches \(highest) m of \(top) m")
        #expect(data.allSatisfy { $0.pressure.doubleValue > 99 && $0.pressure.doubleValue < 103 }, "kPa")
        #expect(zip(data.dropFirst(), data).allSatisfy { abs($0.timestamp - $1.timestamp - 1) < 1e-6 }, "one update a second")
    }

    @Test func stillStaysNearZero() async {
        let data = await updates(SimulatedBarometerSource(scenario: .still, seed: 9, virtualStartTime: 0), count: 60)
        #expect(data.count == 60 && data.allSatisfy { abs($0.relativeAltitude.doubleValue) < 0.4 })
    }

    @Test func iioPressureSensorsAreFoundAndRead() async throws {
        let fs = InMemoryLinuxFileSystem()
        let base = "/sys/bus/iio/devices/"
        fs.setFile(base + "iio:device0/name", "bmp280\n")
        fs.setFile(base + "iio:device0/in_pressure_input", "100.512340000\n")
        fs.setFile(base + "iio:device0/in_temp_input", "21500\n")
        fs.setFile(base + "iio:device1/name", "lsm6dsl_accel\n")
        fs.setFile(base + "iio:device1/in_accel_x_raw", "12\n")
        fs.setFile(base + "iio:device2/name", "lps22hb\n")
        fs.setFile(base + "iio:device2/in_pressure_raw", "4116480\n")
        fs.setFile(base + "iio:device2/in_pressure_scale", "0.000024414\n")
        fs.setFile(base + "iio:device3/name", "broken\n")
        fs.setFile(base + "iio:device3/in_pressure_raw", "1\n")
        fs.setFile(base + "iio:device3/in_pressure_scale", "abc\n")
        let found = LinuxBarometers.scan(sysfsRoot: "/sys", fileSystem: fs)
        #expect(found.sensors.map(\.identifier) == ["iio:bmp280", "iio:lps22hb"])
        #expect(found.skipped.map(\.id) == ["iio:device3"])
        #expect(abs(try found.sensors[0].readPressure(at: 0) - 100.51234) < 1e-9)
        #expect(abs(try found.sensors[1].readPressure(at: 0) - 4116480 * 0.000024414) < 1e-9)
        #expect(LinuxBarometers.first(sysfsRoot: "/sys", name: "lps22hb", fileSystem: fs)?.identifier == "iio:lps22hb")

        // Through the altimeter: updates at the device's pressure, then the device goes away.
        let altimeter = CMAltimeter(barometer: found.sensors[0])
        let data = Recorder<CMAltitudeData>()
        let errors = Recorder<NSError>()
        altimeter.startRelativeAltitudeUpdates(to: serialQueue()) { d, e in
            if let d { data.append(d) }
            if let e { errors.append(e as NSError) }
        }
        #expect(await data.until { data.count >= 1 })
        #expect(abs((data.all.first?.pressure.doubleValue ?? 0) - 100.51234) < 1e-9)
        #expect(data.all.first?.relativeAltitude.doubleValue == 0)
        fs.setReadError(base + "iio:device0/in_pressure_input", ENODEV)
        #expect(await errors.until { errors.count == 1 })
        try? await Task.sleep(nanoseconds: 200_000_000)
        #expect(errors.count == 1 && errors.all.first?.domain == CMErrorDomain && errors.all.first?.code == Int(CMErrorNotAvailable.rawValue))
        altimeter.stopRelativeAltitudeUpdates()
    }

    @Test func withoutABarometerOrAReferenceTheHandlerGetsAnError() async {
        let errors = Recorder<Int>()
        let none = CMAltimeter(optionalBarometer: nil)
        none.startRelativeAltitudeUpdates(to: serialQueue()) { _, e in errors.append((e as NSError?)?.code ?? 0) }
        let sim = CMAltimeter(barometer: SimulatedBarometerSource(scenario: .still, virtualStartTime: 0))
        sim.startAbsoluteAltitudeUpdates(to: serialQueue()) { _, e in errors.append((e as NSError?)?.code ?? 0) }
        #expect(await errors.until { errors.count == 2 })
        #expect(errors.all == [Int(CMErrorNotAvailable.rawValue), Int(CMErrorNotAvailable.rawValue)])
    }
}

@Suite struct AltimeterLifetimeTests {
    @Test func releasingTheAltimeterEndsItsReadings() async throws {
        final class CountingBarometer: BarometerSource, @unchecked Sendable {
            let identifier = "count", name = "counting"
            let virtualStartTime: Double? = 0
            let reads = Locked(0)
            let changes = Changes()
            func readPressure(at timestamp: Double) throws(SourceError) -> Double {
                reads.withLock { $0 += 1 }
                changes.signal()
                return 101
            }
        }
        let barometer = CountingBarometer()
        var altimeter: CMAltimeter? = CMAltimeter(barometer: barometer)
        let queue = serialQueue()
        altimeter?.startRelativeAltitudeUpdates(to: queue) { _, _ in }
        #expect(await barometer.changes.until { barometer.reads.withLock { $0 } > 100 })
        altimeter = nil
        try await Task.sleep(nanoseconds: 100_000_000)  // a read under way may end; holds no thread
        let after = barometer.reads.withLock { $0 }
        try await Task.sleep(nanoseconds: 200_000_000)  // room for a wrong further read
        #expect(barometer.reads.withLock { $0 } == after, "no reading once the altimeter is gone")
    }

    @Test func aRecordingsPressureReplaysThroughTheAltimeter() async throws {
        // 20 s at 10 Hz: 5 s on one floor, a climb of 3 m (ISA) in 10 s, 5 s on the next floor; then the
        // recording ends, which reaches the handler once as CMErrorNotAvailable.
        var csv = "timestamp,sensor,x,y,z\n"
        for k in 0..<200 {
            let t = Double(k) / 10
            let h = min(max(t - 5, 0), 10) * 0.3
            csv += "\(500 + t),accelerometer,0,0,-1\n"
            csv += "\(500 + t),pressure,\(SimulatedBarometer.pressure(altitude: h, seaLevel: 101.2)),0,0\n"
        }
        let path = NSTemporaryDirectory() + "cm-\(UUID().uuidString)-pressure.csv"
        try csv.write(toFile: path, atomically: true, encoding: .utf8)
        let barometer = try #require(AltimeterSelection.barometer(named: "replay:" + path))
        #expect(barometer.identifier == "replay:" + path)
        let altimeter = CMAltimeter(barometer: barometer)
        let data = Recorder<CMAltitudeData>()
        let errors = Recorder<NSError>()
        altimeter.startRelativeAltitudeUpdates(to: serialQueue()) { d, error in
            if let d { data.append(d) }
            if let error { errors.append(error as NSError) }
        }
        #expect(await errors.until { errors.count == 1 })
        altimeter.stopRelativeAltitudeUpdates()
        let heights = data.all.map { $0.relativeAltitude.doubleValue }
        #expect(heights.count >= 18 && heights.count <= 21, "\(heights)")
        #expect(abs(heights.first ?? 1) < 0.05)
        #expect(abs((heights.last ?? 0) - 3) < 0.1, "\(heights)")
        #expect(errors.all.first?.code == Int(CMErrorNotAvailable.rawValue))
        #expect(AltimeterSelection.barometer(named: "replay:/nonexistent.csv") == nil)
    }
}
