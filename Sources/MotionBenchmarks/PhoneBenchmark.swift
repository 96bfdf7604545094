import Foundation
import MotionPhones
import MotionSources
import OpenCoreMotion
#if canImport(Glibc)
import Glibc
#endif

/// A phone source measured from receipt to handler (`coremotion bench phone`): a peer in this process
/// plays the app over 127.0.0.1, each sample numbered, through a ``PhoneSource`` and `CMMotionManager`
/// to three raw-sensor handlers on an `OperationQueue`.
package enum PhoneBenchmark {
    /// The apps the peer can play.
    package enum App: String, CaseIterable, Sendable {
        /// HyperIMU: CSV lines over UDP.
        case hyperimu
        /// SensorLog: JSON over TCP.
        case sensorlog
        /// Sensor Logger: one HTTP POST per sample.
        case sensorlogger
    }

    /// Why a run could not start, one line.
    package typealias Failure = BenchmarkFailure

    /// What one run measured; the keys of `bench phone --json`.
    package struct Result: Codable, Sendable {
        /// The app played.
        package var app: String
        /// Samples per second per sensor.
        package var rate_hz: Double
        /// Seconds of sending.
        package var seconds: Double
        /// Samples sent, all three sensors.
        package var sent: Int
        /// Samples that reached a handler.
        package var delivered: Int
        /// Sent minus delivered.
        package var lost: Int
        /// Samples delivered after a later one of the same sensor.
        package var out_of_order: Int
        /// From just before the peer's send call to the start of the handler, µs.
        package var latency_us: Percentiles
        /// The mapped timestamp minus the time the sample was taken, absolute, µs.
        package var clock_error_us: Percentiles
    }

    /// What the sender and the handlers record, behind one lock.
    final class Tally: Sendable {
        /// Set when the peer has sent its last sample (or given up).
        let finished = Locked(false)
        struct State {
            var sendTimes: [Double]
            var sampleTimes: [Double]
            var latencies: [Double] = []
            var clockErrors: [Double] = []
            var last: [Int: Int] = [:]
            var outOfOrder = 0
            var delivered = 0
        }
        let state: Locked<State>
        init(count: Int) {
            let unset = Array(repeating: Double.nan, count: count)
            state = Locked(State(sendTimes: unset, sampleTimes: unset))
        }

        func record(sensor: Int, seq: Double, timestamp: Double) {
            let now = MonotonicClock.now()
            state.withLock { t in
                guard seq.isFinite, seq >= 0, seq < Double(t.sendTimes.count) else { return }
                let i = Int(seq)
                let sent = t.sendTimes[i]
                guard sent.isFinite else { return }
                t.delivered += 1
                t.latencies.append((now - sent) * 1e6)
                t.clockErrors.append(abs(timestamp - t.sampleTimes[i]) * 1e6)
                if let l = t.last[sensor], i <= l { t.outOfOrder += 1 }
                t.last[sensor] = i
            }
        }
    }

    /// Plays `app` at `rate` Hz per sensor for `seconds` and measures what the handlers receive.
    /// - Parameters:
    ///   - app: the app to play.
    ///   - rate: samples per second per sensor (at most 500).
    ///   - seconds: how long to send (at most 600).
    /// - Throws: ``Failure`` when the source or the peer's listener cannot be opened.
    package static func run(app: App, rate: Double, seconds: Double) async throws -> Result {
        guard rate > 0, rate <= 500, seconds >= 0, seconds <= 600 else {
            throw Failure("the rate must be more than 0 and at most 500 Hz, the duration 0 to 600 s")
        }
        let count = Int(rate * seconds)  // safe: at most 300 000, checked above
        let tally = Tally(count: count)
        let peer: PhonePeer
        let spec: String
        switch app {
        case .sensorlog:
            let server = try LoopbackTCPServer()
            peer = .sensorLog(server)
            spec = "sensorlog://127.0.0.1:\(server.port)?silence=30"
        case .sensorlogger:
            peer = .sensorLogger
            spec = "sensorlogger://127.0.0.1:0?silence=30"
        case .hyperimu:
            peer = .hyperIMU
            spec = "hyperimu://127.0.0.1:0?silence=30"
        }
        let source: PhoneSource
        do { source = try PhoneSource(spec: PhoneSpec(parsing: spec), log: { _ in }) } catch { throw Failure(error.description) }
        let manager = CMMotionManager(source: source)
        manager.accelerometerUpdateInterval = 1 / rate
        manager.gyroUpdateInterval = 1 / rate
        manager.magnetometerUpdateInterval = 1 / rate
        let queue = OperationQueue()
        manager.startAccelerometerUpdates(to: queue) { d, _ in
            guard let d else { return }
            // The peer sends x = −seq in g (Android: +seq · 9.80665 m/s²).
            tally.record(sensor: 0, seq: (-d.acceleration.x).rounded(), timestamp: d.timestamp)
        }
        manager.startGyroUpdates(to: queue) { d, _ in
            guard let d else { return }
            tally.record(sensor: 1, seq: d.rotationRate.x, timestamp: d.timestamp)
        }
        manager.startMagnetometerUpdates(to: queue) { d, _ in
            guard let d else { return }
            tally.record(sensor: 2, seq: d.magneticField.x, timestamp: d.timestamp)
        }
        let port = source.boundAddress?.port ?? 0
        let sender = Thread {
            peer.send(count: count, rate: rate, port: port, tally: tally)
        }
        sender.start()
        while !tally.finished.withLock({ $0 }) { try await Task.sleep(nanoseconds: 20_000_000) }
        // Let the last samples through.
        let deadline = MonotonicClock.now() + 2
        while MonotonicClock.now() < deadline, tally.state.withLock({ $0.delivered }) < 3 * count {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        manager.stopAccelerometerUpdates()
        manager.stopGyroUpdates()
        manager.stopMagnetometerUpdates()
        let result = tally.state.withLock { tally in
            Result(app: app.rawValue, rate_hz: rate, seconds: seconds, sent: 3 * count, delivered: tally.delivered,
                          lost: max(0, 3 * count - tally.delivered), out_of_order: tally.outOfOrder,
                          latency_us: Percentiles(tally.latencies), clock_error_us: Percentiles(tally.clockErrors))
        }
        return result
    }
}

/// A TCP listener on 127.0.0.1 (a free port) for the SensorLog peer.
final class LoopbackTCPServer: Sendable {
    let fd: Int32
    let port: Int
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } } == 0 && listen(fd, 1) == 0
        guard ok else { close(fd); throw PhoneBenchmark.Failure("bench phone: cannot listen on 127.0.0.1") }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// The phone side of the benchmark.
enum PhonePeer: Sendable {
    case hyperIMU
    case sensorLog(LoopbackTCPServer)
    case sensorLogger

    func send(count: Int, rate: Double, port: Int, tally: PhoneBenchmark.Tally) {
        defer { tally.finished.withLock { $0 = true } }
        let g = 9.80665
        let wallStart = Date().timeIntervalSince1970
        let monoStart = MonotonicClock.now()
        var fd: Int32 = -1
        var dest = sockaddr_in()
        dest.sin_family = sa_family_t(AF_INET)
        dest.sin_addr.s_addr = inet_addr("127.0.0.1")
        dest.sin_port = in_port_t(UInt16(port)).bigEndian
        switch self {
        case .hyperIMU:
            fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        case .sensorLog(let server):
            fd = accept(server.fd, nil, nil)
            close(server.fd)
        case .sensorLogger:
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let ok = withUnsafePointer(to: &dest) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            if ok != 0 { return }
        }
        guard fd >= 0 else { return }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var response = [UInt8](repeating: 0, count: 4096)
        for seq in 0..<count {
            let target = monoStart + 0.05 + Double(seq) / rate
            while true {
                let wait = target - MonotonicClock.now()
                if wait <= 0 { break }
                usleep(UInt32(min(wait, 0.01) * 1e6))
            }
            let s = Double(seq)
            let now = MonotonicClock.now()
            // The phone sampled at `target` (its own clock); a late send keeps that time.
            let sampled = target
            let payload: String
            switch self {
            case .hyperIMU:
                let ms = ((wallStart + (sampled - monoStart)) * 1000).rounded(.down)
                payload = "\(Int64(ms)),\(s * g),0,\(g),\(s),0,0.5,\(s),-5,-40\r\n"
            case .sensorLog:
                payload = "{\"accelerometerTimestamp_sinceReboot\":\"\(sampled)\",\"accelerometerAccelerationX\":\"\(-s)\",\"accelerometerAccelerationY\":\"0\",\"accelerometerAccelerationZ\":\"-1\",\"gyroTimestamp_sinceReboot\":\"\(sampled)\",\"gyroRotationX\":\"\(s)\",\"gyroRotationY\":\"0\",\"gyroRotationZ\":\"0.5\",\"magnetometerTimestamp_sinceReboot\":\"\(sampled)\",\"magnetometerX\":\"\(s)\",\"magnetometerY\":\"-5\",\"magnetometerZ\":\"-40\"}"
            case .sensorLogger:
                let ns = Int64(((wallStart + (sampled - monoStart)) * 1e9).rounded())
                let body = "{\"messageId\":\(seq),\"sessionId\":\"bench\",\"deviceId\":\"bench\",\"payload\":[{\"name\":\"totalacceleration\",\"time\":\(ns),\"values\":{\"x\":\(s * g),\"y\":0,\"z\":\(g)}},{\"name\":\"gyroscope\",\"time\":\(ns),\"values\":{\"x\":\(s),\"y\":0,\"z\":0.5}},{\"name\":\"magnetometer\",\"time\":\(ns),\"values\":{\"x\":\(s),\"y\":-5,\"z\":-40}}]}"
                payload = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            }
            tally.state.withLock {
                $0.sendTimes[seq] = now
                $0.sampleTimes[seq] = sampled
            }
            let bytes = Array(payload.utf8)
            switch self {
            case .hyperIMU:
                _ = withUnsafePointer(to: &dest) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            case .sensorLog:
                _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
            case .sensorLogger:
                _ = Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL))
                // Wait for the answer (the app waits too): the end of the headers, empty body.
                var got: [UInt8] = []
                while !got.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                    let n = recv(fd, &response, 1, 0)
                    if n <= 0 { return }
                    got.append(response[0])
                }
            }
        }
        usleep(50_000)
    }
}

/// A simulated phone link for the clock mapping (`bench phone --simulate-clock`): samples on a drifting phone clock, sent alone or in
/// batches, each message delayed by a minimum plus exponential jitter (seeded, reproducible).
package struct ClockSimulation: Sendable {
    var name: String
    var rate = 100.0
    var drift: Double
    var batch: Double
    var minimumDelay = 0.004
    var jitterMean: Double
    var duration: Double

    /// The error of one simulated link, µs.
    package struct Row: Codable, Sendable {
        package var name: String
        package var p50_us: Double
        package var p99_us: Double
        package var max_us: Double
        package var spacing_max_us: Double
    }

    /// The three links `bench phone --simulate-clock` reports.
    package static let standardCases = [
        ClockSimulation(name: "per sample, 80 ppm drift, 10 ms mean jitter", drift: 80e-6, batch: 0, jitterMean: 0.010, duration: 300),
        ClockSimulation(name: "batches of 0.2 s (Sensor Logger), -40 ppm, 20 ms jitter", drift: -40e-6, batch: 0.2, jitterMean: 0.020, duration: 300),
        ClockSimulation(name: "batches of 1 s, 300 ppm, 50 ms jitter", drift: 300e-6, batch: 1, jitterMean: 0.050, duration: 600),
    ]

    /// Simulates the link (seeded: the same rows every time) and measures the mapping after its first 30 s.
    package func run() -> Row {
        var state: UInt64 = 12345
        func uniform() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Double(z >> 11) / Double(1 << 53)
        }
        var mapper = PhoneClockMapper()
        var errors: [Double] = []
        var spacing = 0.0
        var previous: Double?
        var pending: [(truth: Double, phone: Double)] = []
        let start = 5000.0
        var nextSend = start + batch
        var i = 0
        while true {
            let truth = start + Double(i) / rate
            if truth > start + duration { break }
            pending.append((truth, (truth + 1_700_000_000) * (1 + drift)))
            i += 1
            guard batch == 0 || truth >= nextSend else { continue }
            nextSend += batch
            let arrival = truth + minimumDelay - jitterMean * log(1 - uniform())
            for p in pending { mapper.observe(phoneTime: p.phone, arrival: arrival) }
            for p in pending {
                let mapped = min(mapper.hostTime(forPhoneTime: p.phone) ?? arrival, arrival)
                if p.truth > start + 30 {
                    errors.append(abs(mapped - p.truth - minimumDelay) * 1e6)
                    if let previous { spacing = max(spacing, abs(mapped - previous - 1 / rate) * 1e6) }
                }
                previous = mapped
            }
            pending.removeAll()
        }
        let error = Percentiles(errors)
        return Row(name: name, p50_us: error.p50, p99_us: error.p99, max_us: error.max, spacing_max_us: spacing.rounded())
    }
}
