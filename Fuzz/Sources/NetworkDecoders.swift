// The network decoders: MQTT (MotionMQTT) and the phone streams (MotionPhones). Both modules are
// built on SwiftNIO; Fuzz/build compiles them with the sanitizers and links SwiftNIO's own objects
// from SwiftPM's debug build (see Fuzz/README.md).
import MotionFusion
import MotionSources

/// Splits `bytes` into the chunks a socket might deliver: the first byte times `unit` is the chunk
/// length (0 means all at once), the rest the stream.
func chunks(_ bytes: [UInt8], unit: Int = 1) -> [ArraySlice<UInt8>] {
    guard let first = bytes.first else { return [] }
    let body = bytes.dropFirst()
    let size = Int(first) * unit
    guard size > 0 else { return [body] }
    return stride(from: body.startIndex, to: body.endIndex, by: size).map { body[$0..<min($0 + size, body.endIndex)] }
}

#if canImport(MotionMQTT)
import MotionMQTT
import NIOCore

/// What the MQTT client does with the broker's bytes: the packet decoder fed in socket-sized chunks,
/// each packet handed to the client's state machine (connected, subscribed, with QoS 1 publishes in
/// flight). A decoded packet encodes and decodes back to itself; every packet the machine sends in
/// answer encodes; a malformed stream is refused with a message.
@Sendable func fuzzMQTT(_ bytes: [UInt8]) {
    var decoder = MQTTPacketDecoder(maximumPacketSize: 64 * 1024)
    var machine = MQTTStateMachine(connect: MQTTConnect(clientID: "fuzz", keepAlive: 5), maximumInFlight: 4, maximumQueued: 16, responseTimeout: 2)
    var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
    var actions = machine.transportUp(now: now)
    actions += machine.subscribe([("motion/#", .atLeastOnce), ("a/+/b", .exactlyOnce)], now: now)
    for i in 0..<6 {
        actions += machine.publish(MQTTMessage(topic: "motion/\(i)", payload: [UInt8(i)], qos: i % 2 == 0 ? .atLeastOnce : .atMostOnce), now: now)
    }
    func check(_ actions: [MQTTAction]) {
        for case .send(let packet) in actions {
            do { _ = try packet.encoded() } catch { require(false, "the client's answer \(packet) encodes: \(error)") }
        }
    }
    check(actions)
    for chunk in chunks(bytes) {
        decoder.append(chunk)
        while true {
            let packet: MQTTPacket?
            do {
                packet = try decoder.next()
            } catch {
                require(!error.message.isEmpty, "a refusal says why")
                return
            }
            guard let packet else { break }
            if let encoded = try? packet.encoded() {
                let back = try? MQTTPacketDecoder.parseAll(encoded)
                require(back == [packet], "\(packet) encodes and decodes back to itself")
            }
            now = now + .milliseconds(700)
            check(machine.received(packet, now: now))
            check(machine.tick(now: now))
        }
    }
}

let mqttTargets: [String: @Sendable ([UInt8]) -> Void] = ["mqtt": fuzzMQTT]
#else
let mqttTargets: [String: @Sendable ([UInt8]) -> Void] = [:]
#endif

#if canImport(MotionPhones)
import MotionPhones
import NIOCore
import NIOEmbedded
import NIOHTTP1
import MotionRecordingFormats

/// Every reading a decoder returns is finite, as the phone sources require.
func checkDecoded(_ d: PhoneDecoded) {
    for r in d.readings {
        require(r.value.isFinite, "decoded readings are finite: \(r)")
        if let t = r.phoneTime { require(t.isFinite, "phone timestamps are finite: \(r)") }
    }
    require(d.rejected.allSatisfy { !$0.isEmpty }, "a rejection says why")
}

/// SensorServer's WebSocket text messages: the first byte picks the sensor type the endpoint was
/// opened for (`/sensor/connect?type=…`) or none, the rest is the message.
@Sendable func fuzzSensorServer(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let types = SensorServerDecoder.defaultTypes
    let choice = Int(first) % (types.count + 1)
    checkDecoded(SensorServerDecoder.decode(Array(bytes.dropFirst()), defaultType: choice == 0 ? nil : types[choice - 1]))
}

/// SensorLog's TCP stream as its handler reads it: JSON objects back to back without delimiters,
/// or CSV lines under a header (the first non-blank byte decides), in socket-sized chunks.
@Sendable func fuzzSensorLog(_ bytes: [UInt8]) {
    var objects = JSONObjectSplitter(maximumObjectSize: 4096)
    var lines = LineSplitter(maximumLineLength: 4096, hashEnds: false)
    var decoder = SensorLogDecoder()
    var json: Bool?
    var splitterOversized = 0
    for chunk in chunks(bytes) {
        if json == nil, let b = chunk.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }) {
            json = b == UInt8(ascii: "{")
        }
        guard let json else { continue }
        if json {
            for object in objects.feed(chunk) {
                require(object.count <= 4096, "an object is at most the limit")
                checkDecoded(decoder.decode(json: object))
            }
            require(objects.oversized >= splitterOversized, "the oversized count only grows")
            splitterOversized = objects.oversized
        } else {
            for line in lines.feed(chunk) { checkDecoded(decoder.decode(csvLine: line)) }
        }
    }
    if json == false, let last = lines.flush() { checkDecoded(decoder.decode(csvLine: last)) }
}

/// A HyperIMU UDP datagram: the first byte picks a layout (the default, or one parsed from the
/// next bytes up to a NUL, as `?layout=` would be), the rest is the datagram, split into lines as
/// the receiver does.
@Sendable func fuzzHyperIMU(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    var rest = bytes.dropFirst()
    var decoder = HyperIMUDecoder()
    if first & 1 == 1, let nul = rest.firstIndex(of: 0) {
        if let layout = HyperIMUDecoder.layout(parsing: String(decoding: rest[..<nul], as: UTF8.self)) {
            require(!layout.isEmpty, "a parsed layout names at least one sensor or gap")
            decoder = HyperIMUDecoder(layout: layout)
        }
        rest = rest[(nul + 1)...]
    }
    var splitter = LineSplitter(maximumLineLength: 65_536, hashEnds: true)
    var lines = splitter.feed(rest)
    if let last = splitter.flush() { lines.append(last) }
    for line in lines { checkDecoded(decoder.decode(line: line)) }
}

/// Sensor Logger's HTTP push as the server reads it: the bytes of a TCP connection through
/// SwiftNIO's HTTP/1 request decoder (in socket-sized chunks) into the request machine, each body
/// it delivers through the push decoder and the per-device decoder. Answers are HTTP statuses the
/// server knows; an oversized body is refused, never buffered.
@Sendable func fuzzSensorLoggerHTTP(_ bytes: [UInt8]) {
    let maximumBody = 2048
    let channel = EmbeddedChannel()
    defer { _ = try? channel.finish() }
    do {
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
    } catch {
        require(false, "pipeline: \(error)")
    }
    var machine = SensorLoggerRequestMachine(maximumBody: maximumBody, token: bytes.first.map { $0 & 1 == 1 ? "s3cret" : nil } ?? nil)
    var decoder = SensorLoggerDecoder(convention: bytes.first.map { $0 & 2 == 2 ? .apple : .standardised } ?? .standardised)
    var closed = false
    func perform(_ action: SensorLoggerRequestMachine.Action) {
        switch action {
        case .none:
            break
        case .deliver(let body):
            require(body.count <= maximumBody, "a delivered body is within max-body")
            var ok = false
            if let message = try? SensorLoggerPush.decode(body) {
                checkDecoded(decoder.decode(message: message))
                ok = true
            }
            perform(machine.decoded(ok: ok))
        case .respond(let status, _, let close):
            require([200, 400, 401, 403, 404, 405, 411, 413, 415, 500].contains(status), "a known status: \(status)")
            if close { closed = true }
        }
    }
    // Chunks of 8-byte units: the splitting itself is SwiftNIO's decoder, which is not under test.
    for chunk in chunks(bytes, unit: 8) {
        guard !closed else { return }
        var buffer = channel.allocator.buffer(capacity: chunk.count)
        buffer.writeBytes(chunk)
        do {
            try channel.writeInbound(buffer)
        } catch {
            return  // malformed HTTP: the server's errorCaught closes the connection
        }
        while !closed, let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head):
                perform(machine.head(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, keepAlive: head.isKeepAlive))
            case .body(let b):
                perform(machine.body(b.readableBytesView))
            case .end:
                perform(machine.end())
            }
        }
    }
}

let phoneTargets: [String: @Sendable ([UInt8]) -> Void] = [
    "sensorserver": fuzzSensorServer,
    "sensorlog": fuzzSensorLog,
    "hyperimu": fuzzHyperIMU,
    "sensorlogger-http": fuzzSensorLoggerHTTP,
]
#else
let phoneTargets: [String: @Sendable ([UInt8]) -> Void] = [:]
#endif
