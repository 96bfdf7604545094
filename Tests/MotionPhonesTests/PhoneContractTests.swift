import Foundation
import MotionFusion
import MotionSources
import MotionTestSupport
import Testing
@testable import MotionPhones

/// One phone app's live source under the contract, its peer the emulated phone (`phone_emulator.py`,
/// written from the apps' documented formats), streaming at 100 Hz in real time.
///
/// A run lets the phone stream for the run's seconds and returns once half of what it sent has
/// arrived (with `running` false, once the phone has gone: nothing is expected, and any call counts as
/// late). The interruption is the phone going away: silence for a listening app (the spec's
/// `silence=0.5`), the connection closed for a connecting one; it resumes when the phone streams again.
/// Phones never end a source by themselves: the source never sends `.failed` once started.
struct PhoneSubject: SourceContractSubject {
    let app: PhoneApp
    let phone: PhoneSource
    /// The port a connecting app's emulated phone listens on (chosen free up-front); 0 for a listening app.
    let port: Int
    /// The last port the source listened on, for a listening app's runs after the stop.
    let lastPort = Locked(0)

    var source: any SensorSource { phone }
    var sensor: SensorKind { .gyro }
    /// The phone sends at 100 Hz whatever is asked; the source grants what it measured.
    var rates: (first: Double, second: Double) { (100, 50) }

    init(_ app: PhoneApp) throws {
        self.app = app
        port = app.listens ? 0 : try Self.freePort()
        let address = "127.0.0.1:\(port)"
        phone = try PhoneSource(spec: PhoneSpec(parsing: "\(app.rawValue)://\(address)?silence=0.5" + (app.listens ? "" : "&backoff=0.1")),
                                log: quietLog)
    }

    /// A TCP port nothing listens on now.
    static func freePort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        guard bound == 0 else { throw SourceError(.io, "no free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Runs the emulated phone for `seconds` and returns when it has ended (a server phone that nobody
    /// connects to is ended after `seconds` + 1).
    func stream(seconds: Double, running: Bool) async {
        let duration = String(format: "%.2f", seconds)
        var environment = ProcessInfo.processInfo.environment
        let arguments: [String]
        if app.listens {
            if let bound = phone.boundAddress?.port { lastPort.withLock { $0 = bound } }
            let target = lastPort.withLock { $0 }
            arguments = app == .hyperIMU ? ["hyperimu", "127.0.0.1", String(target), duration, "100"]
                                         : ["sensorlogger", "http://127.0.0.1:\(target)/", duration, "100"]
        } else {
            environment["PHONE_PORT"] = String(port)
            arguments = [app == .sensorLog ? "sensorlog" : app == .sensorServer ? "sensorserver" : "phyphox", duration, "100"]
        }
        _ = try? await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", PhoneEmulator.script] + arguments,
                                        environment: environment, timeout: running ? seconds + 20 : seconds + 1)
    }

    func run(seconds: Double, running: Bool, recorder: EventRecorder) async {
        let sensor = self.sensor
        let before = recorder.samples.count
        await stream(seconds: seconds, running: running)
        guard running else { return }
        let expected = before + Int(seconds * 100 / 2)
        let arrived = await recorder.waitFor({ events in
            events.count { if case .sample(let s) = $0 { s.sensor == sensor } else { false } } >= expected
        }, timeout: 60)
        let count = recorder.samples.count
        #expect(arrived, "\(app.rawValue): fewer than half of the samples the phone sent in \(seconds) s arrived (\(count - before) of \(Int(seconds * 100)))")
    }

    func interruptAndResume(recorder: EventRecorder) async -> Bool {
        // The phone streams a little, then goes: silence, or a closed connection.
        await stream(seconds: 0.3, running: true)
        let interrupted = await recorder.waitFor({ $0.contains { if case .interrupted = $0 { true } else { false } } }, timeout: 60)
        #expect(interrupted, "\(app.rawValue): no interruption once the phone went away")
        // It comes back: delivery resumes without a new apply.
        await stream(seconds: 0.5, running: true)
        _ = await recorder.waitFor({ events in
            guard let i = events.firstIndex(where: { if case .interrupted = $0 { true } else { false } }) else { return false }
            return events[(i + 1)...].contains { if case .sample = $0 { true } else { false } }
        }, timeout: 60)
        return true
    }

    func end(recorder: EventRecorder) async -> Bool { false }
}

/// Every phone app's live source keeps the contract of every ``SensorSource``: start, stop, no sink
/// call once `apply(.none)` has returned (while the phone keeps sending), no terminal event,
/// interruption when the phone goes and resumption when it returns, the rate granted as measured.
@Suite struct PhoneContractTests {
    /// Every app. Sensor Logger and phyphox joined once two losses this subject found were fixed: a
    /// Sensor Logger that counts its messages from 0 again in the same session lost them as duplicates,
    /// and a restarted phyphox experiment (a new session, times from 0 again) lost its readings as stale.
    @Test(arguments: [PhoneApp.hyperIMU, .sensorLog, .sensorServer, .sensorLogger, .phyphox])
    func phoneKeepsTheContract(app: PhoneApp) async {
        #expect(await SourceContract.check { try PhoneSubject(app) } == [])
    }
}
