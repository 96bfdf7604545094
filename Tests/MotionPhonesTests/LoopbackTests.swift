import Foundation
import MotionFusion
import MotionSources
import NIOConcurrencyHelpers
import OpenCoreMotion
import MotionTestSupport
import Testing
@testable import MotionPhones

/// Runs `phone_emulator.py` (Python standard library only) as a phone.
final class PhoneEmulator: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("phone_emulator.py").path
    }

    init(_ arguments: [String], port: Int? = nil, environment: [String: String] = [:]) throws {
        if port != nil || !environment.isEmpty {
            var env = ProcessInfo.processInfo.environment
            if let port { env["PHONE_PORT"] = String(port) }
            env.merge(environment) { $1 }
            process.environment = env
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script] + arguments
        process.standardOutput = output
        try process.run()
    }

    /// The first line the emulator prints (a server's port), read on a thread of its own.
    func port() async throws -> Int? {
        try await offThePool { [self] in firstLine() }
    }

    private func firstLine() -> Int? {
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let b = byte.first else { return nil }
            if b == 0x0A { break }
            line.append(b)
        }
        return Int(String(decoding: line, as: UTF8.self))
    }

    /// Waits for the emulator to end (without holding a thread) and returns its exit status.
    func wait() async -> Int32 {
        await exited(process)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Collects what a source delivers.
final class Collector: Sendable {
    /// The monotonic clock when the collector was made, before any phone started: no sample is older.
    let created = MonotonicClock.now()
    let samples = NIOLockedValueBox<[RawSample]>([])
    let failures = NIOLockedValueBox<[SourceError]>([])
    let interruptions = NIOLockedValueBox<[SourceError]>([])
    var sink: @Sendable (SourceEvent) -> Void {
        { [self] event in
            switch event {
            case .sample(let s): samples.withLockedValue { $0.append(s) }
            case .failed(let e): failures.withLockedValue { $0.append(e) }
            case .interrupted(let e): interruptions.withLockedValue { $0.append(e) }
            case .finished: break
            }
        }
    }
    func of(_ sensor: SensorKind) -> [RawSample] { samples.withLockedValue { $0.filter { $0.sensor == sensor } } }
}

let allSensors = SensorDemand(rates: [.accelerometer: 100, .gyro: 100, .magnetometer: 100])
let quietLog: @Sendable (String) -> Void = { _ in }

/// The checks every emulated phone must pass: face up reads z within 0.05 of −1 g, the rotation about
/// z reads +0.5 rad/s, the magnetic field has the emulator's magnitude and vertical component in µT,
/// timestamps rise per sensor and lie in the recent past on this machine's clock.
func checkPhysics(_ c: Collector, minimumCount: Int = 20, sourceLocation: SourceLocation = #_sourceLocation) {
    let now = MonotonicClock.now()
    for sensor in SensorKind.motion {
        let s = c.of(sensor)
        #expect(s.count >= minimumCount, "\(sensor): \(s.count) samples", sourceLocation: sourceLocation)
        #expect(zip(s.dropFirst(), s).allSatisfy { $0.0.timestamp > $0.1.timestamp }, "\(sensor) timestamps rise", sourceLocation: sourceLocation)
        // Seconds since boot, between the collector's creation (the phone started after it; 1 s for
        // converting a phone's wall-clock times) and now, however long a loaded machine took meanwhile.
        if let first = s.first, let last = s.last {
            #expect(first.timestamp > c.created - 1 && last.timestamp <= now,
                    "\(sensor): \(first.timestamp)…\(last.timestamp), collector made at \(c.created), now \(now)", sourceLocation: sourceLocation)
        }
    }
    for a in c.of(.accelerometer) {
        #expect(abs(a.value.z + 1) < 0.05 && abs(a.value.x) < 0.05 && abs(a.value.y) < 0.05, "acceleration \(a.value)", sourceLocation: sourceLocation)
    }
    for g in c.of(.gyro) {
        #expect(abs(g.value.z - 0.5) < 1e-3 && abs(g.value.x) < 1e-3, "rotation \(g.value)", sourceLocation: sourceLocation)
    }
    for m in c.of(.magnetometer) {
        let horizontal = (m.value.x * m.value.x + m.value.y * m.value.y).squareRoot()
        #expect(abs(horizontal - 20) < 0.01 && abs(m.value.z + 40) < 0.01, "field \(m.value)", sourceLocation: sourceLocation)
    }
}

@Suite(.serialized) struct PhoneLoopbackTests {
    @Test func sensorLoggerHTTPPush() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0"), log: quietLog)
        let c = Collector()
        // Before any data the source reports its highest rate, so the hub thins by timestamp.
        #expect(try source.apply(allSensors, sink: c.sink)[.gyro] == 500)
        let port = try #require(source.boundAddress?.port)
        let phone = try PhoneEmulator(["sensorlogger", "http://127.0.0.1:\(port)/", "1.0", "100"])
        #expect(await phone.wait() == 0)
        // Once data flowed, the rate measured.
        let granted = try source.apply(allSensors, sink: c.sink)
        #expect(granted[.gyro].map { abs($0 - 100) < 15 } == true, "granted \(granted)")
        _ = try? source.apply(.none) { _ in }
        checkPhysics(c, minimumCount: 60)
        let stats = source.statistics
        #expect(stats.malformed == 0 && stats.oversized == 0)
        #expect(stats.sensors[.gyro]?.rate.map { abs($0 - 100) < 15 } == true, "rate \(String(describing: stats.sensors[.gyro]?.rate))")
    }

    @Test func hyperIMUOverUDP() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?sensors=acc,gyro,mag"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        let port = try #require(source.boundAddress?.port)
        let phone = try PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "0.8", "100"])
        #expect(await phone.wait() == 0)
        await eventually { c.of(.magnetometer).count >= 60 }
        _ = try? source.apply(.none) { _ in }
        checkPhysics(c, minimumCount: 50)
    }

    @Test func sensorServerWebSocket() async throws {
        let phone = try PhoneEmulator(["sensorserver", "1.0", "100"])
        let port = try #require(await phone.port())
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorserver://127.0.0.1:\(port)"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        _ = await phone.wait()
        await eventually { c.of(.magnetometer).count >= 80 }
        _ = try? source.apply(.none) { _ in }
        checkPhysics(c, minimumCount: 60)
        #expect(source.statistics.malformed == 0)
    }

    @Test(arguments: [false, true]) func sensorLogTCP(csv: Bool) async throws {
        let phone = try PhoneEmulator(["sensorlog", "1.0", "100"] + (csv ? ["csv"] : []))
        let port = try #require(await phone.port())
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:\(port)"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        _ = await phone.wait()
        await eventually { c.of(.magnetometer).count >= 80 }
        _ = try? source.apply(.none) { _ in }
        checkPhysics(c, minimumCount: 60)
        #expect(source.statistics.malformed == 0)
    }

    @Test(arguments: ["android", "ios"]) func phyphoxREST(platform: String) async throws {
        let phone = try PhoneEmulator(["phyphox", "1.0", "100", platform])
        let port = try #require(await phone.port())
        let source = try PhoneSource(spec: PhoneSpec(parsing: "phyphox://127.0.0.1:\(port)?interval=0.03"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        _ = await phone.wait()
        await eventually { c.of(.magnetometer).count >= 80 }
        _ = try? source.apply(.none) { _ in }
        // At least 60 of the 100: the first poll may come late on a loaded machine.
        checkPhysics(c, minimumCount: 60)
        // Buffers of unequal length in one answer: nothing lost, nothing twice (100 Hz for 1 s; the
        // first poll takes the last value only, so what came before it, more under load, is skipped).
        for sensor in SensorKind.motion {
            let samples = c.of(sensor)
            guard let first = samples.first, let last = samples.last else { continue }
            // One sample per 10 ms from the first poll on. The mapped span follows the estimate of the
            // network delay, which moves by milliseconds; a lost poll would miss 3 samples.
            let expected = Int(((last.timestamp - first.timestamp) / 0.01).rounded()) + 1
            #expect(samples.count <= 101 && samples.count >= expected - 1, "\(sensor): \(samples.count) samples over \(expected) sampling times")
            #expect(zip(samples.dropFirst(), samples).allSatisfy { $0.0.timestamp > $0.1.timestamp }, "\(sensor): a timestamp twice or backwards")
        }
        let gyro = c.of(.gyro)
        let spacing = zip(gyro.dropFirst(), gyro).map { $0.0.timestamp - $0.1.timestamp }.sorted()
        #expect(abs(spacing[spacing.count / 2] - 0.01) < 0.001, "median spacing \(spacing[spacing.count / 2])")
        #expect(source.statistics.malformed == 0)
        #expect(source.statistics.connections == 1)
        // The phone's own pressure, gravity and attitude, in Core Motion's units and frame.
        let extras = source.extras
        #expect(extras.latest["pressure"].map { (90...101).contains($0.count) } == true)
        #expect(extras.pressure.map { abs($0.kPa - 101.325) < 1e-6 } == true, "\(String(describing: extras.pressure))")
        let gravity = try #require(extras.gravity?.g)
        #expect(abs(gravity.z + 1) < 0.001 && abs(gravity.x) < 1e-9, "gravity \(gravity)")
        // The attitude maps the device frame to north-west-up: the field measured in the device frame,
        // turned into the reference frame, points north (x) and down (z), with no west component.
        let attitude = try #require(extras.attitude)
        let field = try #require(c.of(.magnetometer).last)
        #expect(abs(attitude.timestamp - field.timestamp) < 0.02)
        let north = attitude.quaternion.rotate(field.value)
        #expect(abs(north.x - 20) < 0.5 && abs(north.y) < 0.5 && abs(north.z + 40) < 0.01, "field in the reference frame \(north)")
        #expect(abs(attitude.quaternion.inverseRotate(Vector3(0, 0, -1)).z + 1) < 1e-9)
    }

    @Test func phonePressureDrivesCMAltimeter() async throws {
        let phone = try PhoneEmulator(["phyphox", "2.5", "50"])
        let port = try #require(await phone.port())
        let source = try PhoneSource(spec: PhoneSpec(parsing: "phyphox://127.0.0.1:\(port)"), log: quietLog)
        let altimeter = CMAltimeter(barometer: PhoneBarometer(source: source))
        let readings = NIOLockedValueBox<[Double]>([])
        let queue = OperationQueue()
        altimeter.startRelativeAltitudeUpdates(to: queue) { data, error in
            if let data { readings.withLockedValue { $0.append(data.pressure.doubleValue) } }
        }
        await eventually { readings.withLockedValue { $0.count } >= 1 }
        altimeter.stopRelativeAltitudeUpdates()
        _ = await phone.wait()
        let got = readings.withLockedValue { $0 }
        #expect(!got.isEmpty)
        #expect(got.allSatisfy { abs($0 - 101.325) < 1e-6 }, "\(got)")
    }

    @Test func deviceMotionRunsOnAPhone() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0"), log: quietLog)
        let manager = CMMotionManager(source: source)
        manager.deviceMotionUpdateInterval = 0.01
        let motions = NIOLockedValueBox<[CMDeviceMotion]>([])
        manager.startDeviceMotionUpdates(to: OperationQueue()) { motion, _ in
            if let motion { motions.withLockedValue { $0.append(motion) } }
        }
        let port = try #require(source.boundAddress?.port)
        let phone = try PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "1.5", "100"])
        _ = await phone.wait()
        await eventually { motions.withLockedValue { $0.count } >= 100 }
        manager.stopDeviceMotionUpdates()
        let last = try #require(motions.withLockedValue { $0.last })
        #expect(abs(last.gravity.z + 1) < 0.05, "gravity \(last.gravity)")
        #expect(abs(last.rotationRate.z - 0.5) < 0.05, "rotation rate \(last.rotationRate)")
    }

    @Test func portInUseIsAClearError() async throws {
        let first = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0"), log: quietLog)
        try first.apply(allSensors) { _ in }
        let port = try #require(first.boundAddress?.port)
        let second = try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:\(port)"), log: quietLog)
        do {
            try second.apply(allSensors) { _ in }
            Issue.record("a second listener on port \(port) started")
        } catch {
            #expect(error.message.contains("port \(port) is in use"), "\(error)")
        }
        _ = try? first.apply(.none) { _ in }
    }

    @Test func silenceInterruptsOnceAndDataResumes() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?silence=0.3"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        let port = try #require(source.boundAddress?.port)
        _ = try await PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "0.2", "100"]).wait()
        await eventually { !c.interruptions.withLockedValue { $0.isEmpty } }
        await pauseFor(0.4)
        let interruptions = c.interruptions.withLockedValue { $0 }
        #expect(interruptions.count == 1, "one interruption per silence, not one per tick")
        #expect(interruptions.first?.kind == .deviceRemoved)
        #expect(c.failures.withLockedValue { $0.isEmpty }, "silence is not fatal")
        // The phone sends again, to the same running source: readings flow without a restart.
        let before = c.of(.gyro).count
        _ = try await PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "0.3", "100"]).wait()
        await eventually { c.of(.gyro).count >= before + 20 }
        #expect(c.of(.gyro).count >= before + 20)
        // A second silence is reported again, once.
        await eventually { c.interruptions.withLockedValue { $0.count } >= 2 }
        _ = try? source.apply(.none) { _ in }
        #expect(c.interruptions.withLockedValue { $0.count } == 2)
        #expect(c.failures.withLockedValue { $0.isEmpty })
    }

    @Test func managerHandlersGetOneErrorThenDataAgainAfterSilence() async throws {
        let source = try PhoneSource(spec: PhoneSpec(parsing: "hyperimu://127.0.0.1:0?silence=0.3"), log: quietLog)
        let manager = CMMotionManager(source: source)
        manager.gyroUpdateInterval = 0.01
        let events = NIOLockedValueBox<[String]>([])
        manager.startGyroUpdates(to: OperationQueue()) { data, error in
            if let error = error as NSError? {
                events.withLockedValue { $0.append("error \(error.domain) \(error.code)") }
            } else if data != nil {
                events.withLockedValue { if $0.last != "data" { $0.append("data") } }
            }
        }
        defer { manager.stopGyroUpdates() }
        let port = try #require(source.boundAddress?.port)
        _ = try await PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "0.2", "100"]).wait()
        await eventually { events.withLockedValue { $0.count } >= 2 }
        await pauseFor(0.5)
        _ = try await PhoneEmulator(["hyperimu", "127.0.0.1", String(port), "0.3", "100"]).wait()
        await eventually { events.withLockedValue { $0.count } >= 3 }
        let seen = events.withLockedValue { $0 }
        #expect(Array(seen.prefix(3)) == ["data", "error \(CMErrorDomain) \(CMErrorNotAvailable.rawValue)", "data"], "\(seen)")
        #expect(manager.isGyroActive)
    }

    @Test func lostConnectionInterruptsAndTheReconnectResumes() async throws {
        let phone = try PhoneEmulator(["sensorlog", "0.3", "100"])
        let port = try #require(await phone.port())
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:\(port)?backoff=0.1&silence=30"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        _ = await phone.wait()
        await eventually { !c.interruptions.withLockedValue { $0.isEmpty } }
        #expect(c.interruptions.withLockedValue { $0.count } == 1, "the phone closed: one interruption")
        let before = c.of(.gyro).count
        #expect(before >= 10)
        // The phone comes back on the same port; the source reconnects by itself.
        let again = try PhoneEmulator(["sensorlog", "0.5", "100"], port: port)
        #expect(try await again.port() == port)
        await eventually { c.of(.gyro).count >= before + 20 }
        _ = try? source.apply(.none) { _ in }
        _ = await again.wait()
        #expect(c.of(.gyro).count >= before + 20)
        #expect(c.failures.withLockedValue { $0.isEmpty })
        #expect(source.statistics.connections == 2)
    }

    @Test func connectingSourceRetriesUntilThePhoneIsUp() async throws {
        // Nothing listens yet: the source retries with backoff and never fails before `silence`.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        close(probe)
        let source = try PhoneSource(spec: PhoneSpec(parsing: "sensorlog://127.0.0.1:\(port)?backoff=0.2&silence=30"), log: quietLog)
        let c = Collector()
        try source.apply(allSensors, sink: c.sink)
        await pauseFor(0.7)
        #expect(c.samples.withLockedValue { $0.isEmpty })
        #expect(source.statistics.connections == 0)
        // The phone comes up: the next attempt (at most 0.2 s later) connects and data flows.
        let phone = try PhoneEmulator(["sensorlog", "1.0", "100"], port: port)
        #expect(try await phone.port() == port)
        _ = await phone.wait()
        await eventually { c.of(.gyro).count >= 50 }
        _ = try? source.apply(.none) { _ in }
        #expect(source.statistics.connections == 1)
        #expect(c.of(.gyro).count >= 50)
        #expect(c.failures.withLockedValue { $0.isEmpty })
    }
}
