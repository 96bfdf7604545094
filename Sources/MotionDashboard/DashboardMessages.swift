import MotionFusion
import NIOCore

/// The schema of every message the server sends to a page: one `Encodable` type per message, and
/// the only way a message becomes JSON (``DashboardServerMessage/encoded()``). `PROTOCOL.md` documents
/// these types; `ProtocolDocumentTests` checks that it lists every message and every field.
///
/// Keys are written in declaration order, `type` first (``DashboardJSONEncoder``), so a message's text
/// depends only on its content. Numbers in sample rows are rounded (``DashboardRow``); a value JSON
/// cannot carry (NaN, ±∞) is written as `null`.
enum DashboardServerMessage: Encodable, Sendable {
    case hello(Hello)
    case state(State)
    case samples(Samples)
    case ack(Ack)
    case error(ErrorReply)
    case sourceError(SourceError)

    /// The message types, by their `"type"` on the wire.
    enum Kind: String, Encodable, Sendable, CaseIterable {
        case hello, state, samples, ack, error, sourceError
    }

    /// The `"type"` of this message.
    var kind: Kind {
        switch self {
        case .hello: .hello
        case .state: .state
        case .samples: .samples
        case .ack: .ack
        case .error: .error
        case .sourceError: .sourceError
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .hello(let m): try m.encode(to: encoder)
        case .state(let m): try m.encode(to: encoder)
        case .samples(let m): try m.encode(to: encoder)
        case .ack(let m): try m.encode(to: encoder)
        case .error(let m): try m.encode(to: encoder)
        case .sourceError(let m): try m.encode(to: encoder)
        }
    }

    /// The message as JSON text, ready to send in one WebSocket text frame.
    func encoded() -> ByteBuffer {
        ByteBuffer(string: text)
    }

    /// The message as a `String` (the HTTP API and tests).
    var text: String {
        // Every number is finite or `Nullable` by construction; a failure here is a schema bug, and
        // it is reported to the page rather than crashing the server.
        do {
            return try DashboardJSONEncoder.encode(self, capacity: kind == .samples ? 2048 : 512)
        } catch {
            return #"{"type":"error","code":"internal","message":"message could not be encoded","request":null}"#
        }
    }

    // MARK: messages

    /// `hello`: the first message on every connection: the source, its streams and the limits.
    struct Hello: Encodable, Sendable {
        let type = Kind.hello
        /// ``DashboardHub/protocolVersion``.
        var `protocol`: Int
        var source: Source
        /// Core Motion reference frames device motion can use here, in preference order.
        var referenceFrames: [String]
        /// The columns of each stream's rows in `samples`.
        var columns: [String: [String]]
        /// The unit of each quantity.
        var units: [String: String]
        var limits: Limits
        /// How many messages may wait for one page before it is dropped.
        var outboxCapacity: Int

        struct Source: Encodable, Sendable {
            var identifier: String
            var name: String
            /// Available streams only; rates in Hz and range in the stream's unit, `null` when unknown.
            var streams: [String: Stream]
            /// `[key, value]` pairs, in order.
            var details: [[String]]
        }

        struct Stream: Encodable, Sendable {
            var minimumRateHz: Nullable<Double>
            var maximumRateHz: Nullable<Double>
            var range: Nullable<Double>
        }

        struct Limits: Encodable, Sendable {
            var intervalMs: IntervalLimits
            var filterFactor: FactorLimits
        }

        struct IntervalLimits: Encodable, Sendable {
            var min: Int
            var max: Int
            var step: Int
        }

        struct FactorLimits: Encodable, Sendable {
            var min: Double
            var max: Double
            var `default`: Double
        }
    }

    /// `state`: the shared state, after `hello` and to every page after any change.
    struct State: Encodable, Sendable {
        let type = Kind.state
        var intervalMs: Int
        /// Every stream the protocol knows, available or not.
        var sensors: [String: Sensor]
        /// The last error of the whole source.
        var sourceError: Nullable<String>
        var referenceFrame: Nullable<String>
        var filter: Filter
        /// `"portrait"`, `"faceUp"`, … or `null` when unknown.
        var orientation: Nullable<String>
        /// Pages connected.
        var clients: Int
        /// The devices of a multi-device source (an MQTT broker), in the order heard; empty otherwise.
        var devices: [DashboardDevice]
        /// The device shown, or `null`.
        var device: Nullable<String>

        struct Sensor: Encodable, Sendable {
            var available: Bool
            var running: Bool
            /// The last error the source reported for this stream.
            var error: Nullable<String>
        }

        struct Filter: Encodable, Sendable {
            var mode: String
            var factor: Double
        }
    }

    /// `samples`: what arrived since the previous frame, per stream, oldest first; a stream with no
    /// row is left out.
    struct Samples: Encodable, Sendable {
        /// Counts batches from 1.
        var seq: UInt64
        var rows: [DashboardSensor: [DashboardSample]]

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(Kind.samples, forKey: Key(stringValue: "type"))
            try c.encode(seq, forKey: Key(stringValue: "seq"))
            for sensor in DashboardSensor.allCases {
                guard let samples = rows[sensor], !samples.isEmpty else { continue }
                try c.encode(samples.map(DashboardRow.init), forKey: Key(stringValue: sensor.rawValue))
            }
        }
    }

    /// `ack`: a control message was applied; to its sender only.
    struct Ack: Encodable, Sendable {
        let type = Kind.ack
        /// The request's `type`.
        var request: String
        /// The request's `id`, when it had one (the key is absent otherwise).
        var id: DashboardRequestID?
    }

    /// `error`: a control message was refused; to its sender only.
    struct ErrorReply: Encodable, Sendable {
        let type = Kind.error
        var code: String
        var message: String
        /// The request's `type`, or `null` when it could not be read.
        var request: Nullable<String>
        /// The request's `id`, when it had one (the key is absent otherwise).
        var id: DashboardRequestID?

        init(_ error: DashboardControlError) {
            code = error.code.rawValue
            message = error.message
            request = Nullable(error.request)
            id = error.id
        }
    }

    /// `sourceError`: the source reported an error; to every page.
    struct SourceError: Encodable, Sendable {
        let type = Kind.sourceError
        /// The stream, or `null` for the whole source.
        var sensor: Nullable<String>
        var message: String
    }
}

/// A value written as `null` when absent, where a synthesised `Encodable` would leave the key out.
struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    var value: Value?

    init(_ value: Value?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let value { try c.encode(value) } else { try c.encodeNil() }
    }
}

extension Nullable where Value == Double {
    /// A number; NaN and ±∞, which JSON cannot carry, become `null`.
    init(finite value: Double?) { self.value = value.flatMap { $0.isFinite ? $0 : nil } }
}

/// One sample as a row of a `samples` message, in the order of ``DashboardSensor/columns``.
struct DashboardRow: Encodable, Sendable {
    var sample: DashboardSample

    init(_ sample: DashboardSample) { self.sample = sample }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        func number(_ x: Double, decimals: Int = 6) throws {
            guard x.isFinite else { return try c.encodeNil() }
            let scale = Self.powersOf10[decimals]
            let r = (x * scale).rounded() / scale
            try c.encode(r == 0 ? 0 : r)  // no "-0"
        }
        func optional(_ x: Double?) throws {
            if let x { try number(x) } else { try c.encodeNil() }
        }
        func vector(_ v: Vector3) throws {
            try number(v.x)
            try number(v.y)
            try number(v.z)
        }
        try number(sample.timestamp)
        switch sample.value {
        case .vector(let v):
            try vector(v)
        case .deviceMotion(let m):
            try number(m.roll)
            try number(m.pitch)
            try number(m.yaw)
            try number(m.quaternion.x)
            try number(m.quaternion.y)
            try number(m.quaternion.z)
            try number(m.quaternion.w)
            try vector(m.gravity)
            try vector(m.userAcceleration)
            try vector(m.rotationRate)
            try vector(m.magneticField)
            try c.encode(m.magneticFieldAccuracy)
            try number(m.heading, decimals: 3)
        case .pedometer(let p):
            try c.encode(p.steps)
            try optional(p.distance)
            try optional(p.cadence)
            try optional(p.pace)
        case .altitude(let a):
            try number(a.relativeAltitude)
            try number(a.pressure)
        case .activity(let a):
            try c.encode(a.activity)
            try c.encode(a.confidence)
        }
    }

    private static let powersOf10: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6]
}

extension DashboardSensor {
    /// The columns of this stream's rows in `samples` (sent in `hello.columns`); ``DashboardRow``
    /// writes them in this order.
    var columns: [String] {
        switch self {
        case .accelerometer, .gyro, .magnetometer:
            ["t", "x", "y", "z"]
        case .deviceMotion:
            ["t", "roll", "pitch", "yaw", "qx", "qy", "qz", "qw", "gravityX", "gravityY", "gravityZ",
             "userX", "userY", "userZ", "rateX", "rateY", "rateZ", "fieldX", "fieldY", "fieldZ",
             "fieldAccuracy", "heading"]
        case .pedometer:
            ["t", "steps", "distance", "cadence", "pace"]
        case .altitude:
            ["t", "relativeAltitude", "pressure"]
        case .activity:
            ["t", "activity", "confidence"]
        }
    }

    /// The units of the quantities in `hello.units`.
    static let units: [String: String] = [
        "accelerometer": "g", "gyro": "rad/s", "magnetometer": "µT", "attitude": "rad", "heading": "°",
        "distance": "m", "cadence": "steps/s", "pace": "s/m", "relativeAltitude": "m", "pressure": "kPa",
    ]
}

/// A request's correlation `id`, echoed in the reply: a string or an integer, as the page sent it.
enum DashboardRequestID: Hashable, Sendable, Encodable {
    case string(String)
    case integer(Int64)

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .integer(let i): try c.encode(i)
        }
    }
}
