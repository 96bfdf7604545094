import Foundation

/// A control message from a page, parsed and validated. See `PROTOCOL.md`.
enum DashboardControl: Equatable, Sendable {
    /// The update interval of every stream, in milliseconds (10…100, a multiple of 5).
    case interval(milliseconds: Int)
    case start(DashboardSensor)
    case stop(DashboardSensor)
    /// A Core Motion reference frame name, such as `xArbitraryZVertical`.
    case referenceFrame(String)
    case filter(DashboardFilter)
    /// Shows one device of a multi-device source, by its id.
    case device(String)
    /// Asks for a fresh `state` message.
    case state

    /// The wire name of the request, echoed in replies.
    var requestType: String {
        switch self {
        case .interval: "interval"
        case .start: "start"
        case .stop: "stop"
        case .referenceFrame: "referenceFrame"
        case .filter: "filter"
        case .device: "device"
        case .state: "state"
        }
    }
}

/// The accelerometer filter of Apple's seed code: `low = f·x + (1−f)·low`, `high = x − low`.
struct DashboardFilter: Equatable, Sendable {
    enum Mode: String, Sendable, CaseIterable {
        case off, lowPass, highPass
    }
    var mode: Mode
    /// The filtering factor `f`, 0.01…1; the seed's default is 0.1.
    var factor: Double

    static let off = DashboardFilter(mode: .off, factor: DashboardLimits.defaultFilterFactor)
}

/// The ranges the server accepts; sent to pages in `hello`.
enum DashboardLimits {
    static let minimumIntervalMilliseconds = 10
    static let maximumIntervalMilliseconds = 100
    static let intervalStepMilliseconds = 5
    static let defaultIntervalMilliseconds = 20
    static let minimumFilterFactor = 0.01
    static let maximumFilterFactor = 1.0
    static let defaultFilterFactor = 0.1
    /// Control messages larger than this are refused.
    static let maximumControlBytes = 4096
}

/// Why a control message was refused; sent back as an `error` message.
struct DashboardControlError: Error, Equatable, Sendable {
    enum Code: String, Sendable {
        /// Not JSON, not an object, a field of the wrong type, or binary.
        case malformed
        /// `type` is missing or not one the server knows.
        case unknownType
        /// A number outside its range or off its step.
        case outOfRange
        /// A sensor or reference-frame name the server does not know.
        case unknownName
        /// The sensor or frame exists but this source does not provide it.
        case unavailable
    }
    var code: Code
    var message: String
    /// The `type` of the refused request, when it could be read.
    var request: String?
    /// The request's `id`, when it had one.
    var id: DashboardRequestID?
}

/// A parsed request: the control and the caller's correlation id, if any.
struct DashboardRequest: Equatable, Sendable {
    var control: DashboardControl
    var id: DashboardRequestID?
}

enum DashboardControlParser {
    /// Parses one text message. Range checks that do not depend on the source are done here;
    /// availability is checked by the hub.
    static func parse(_ text: String) -> Result<DashboardRequest, DashboardControlError> {
        func fail(_ code: DashboardControlError.Code, _ message: String, _ request: String? = nil, _ id: DashboardRequestID? = nil)
            -> Result<DashboardRequest, DashboardControlError>
        {
            .failure(DashboardControlError(code: code, message: message, request: request, id: id))
        }
        let bytes = Data(text.utf8)
        guard bytes.count <= DashboardLimits.maximumControlBytes else {
            return fail(.malformed, "control message larger than \(DashboardLimits.maximumControlBytes) bytes")
        }
        let fields: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: bytes) else {
                return fail(.malformed, "control message must be a JSON object")
            }
            fields = object
        } catch {
            return fail(.malformed, "control message is not valid JSON")
        }
        var id: DashboardRequestID?
        switch fields["id"] {
        case nil: break
        case .string(let s)?:
            id = .string(s)
        case .number(let n)? where n == n.rounded() && abs(n) < 1e15:
            id = .integer(Int64(n))  // safe: integral and below 1e15
        default:
            return fail(.malformed, "\"id\" must be a string or an integer")
        }
        guard case .string(let type)? = fields["type"] else {
            return fail(.unknownType, "control message needs a string \"type\"", nil, id)
        }
        /// `.some(nil)`: absent; `nil`: present but not a number.
        func number(_ key: String) -> Double?? {
            switch fields[key] {
            case nil: return .some(nil)
            case .number(let n)?: return .some(n)
            default: return nil
            }
        }
        func string(_ key: String) -> String? {
            if case .string(let s)? = fields[key] { return s }
            return nil
        }
        func sensor() -> Result<DashboardSensor, DashboardControlError> {
            guard fields["sensor"] != nil else {
                return .failure(.init(code: .malformed, message: "\"\(type)\" needs a \"sensor\"", request: type, id: id))
            }
            guard let name = string("sensor") else {
                return .failure(.init(code: .malformed, message: "\"sensor\" must be a string", request: type, id: id))
            }
            guard let s = DashboardSensor(rawValue: name) else {
                let known = DashboardSensor.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(
                    .init(code: .unknownName, message: "unknown sensor \"\(name)\"; one of \(known)", request: type, id: id))
            }
            return .success(s)
        }

        switch type {
        case "interval":
            guard let value = number("ms") else { return fail(.malformed, "\"ms\" must be a number", type, id) }
            guard let ms = value else { return fail(.malformed, "\"interval\" needs \"ms\"", type, id) }
            let lo = DashboardLimits.minimumIntervalMilliseconds, hi = DashboardLimits.maximumIntervalMilliseconds
            let step = DashboardLimits.intervalStepMilliseconds
            guard ms.isFinite, ms >= Double(lo), ms <= Double(hi), ms == ms.rounded(), Int(ms) % step == 0 else {
                return fail(.outOfRange, "interval must be \(lo)…\(hi) ms in steps of \(step) ms; got \(ms)", type, id)
            }
            return .success(DashboardRequest(control: .interval(milliseconds: Int(ms)), id: id))
        case "start", "stop":
            switch sensor() {
            case .failure(let e): return .failure(e)
            case .success(let s):
                return .success(DashboardRequest(control: type == "start" ? .start(s) : .stop(s), id: id))
            }
        case "referenceFrame":
            guard let frame = string("frame") else {
                return fail(.malformed, "\"referenceFrame\" needs a string \"frame\"", type, id)
            }
            return .success(DashboardRequest(control: .referenceFrame(frame), id: id))
        case "filter":
            guard let modeName = string("mode") else {
                return fail(.malformed, "\"filter\" needs a string \"mode\": off, lowPass or highPass", type, id)
            }
            guard let mode = DashboardFilter.Mode(rawValue: modeName) else {
                return fail(.unknownName, "unknown filter mode \"\(modeName)\"; one of off, lowPass, highPass", type, id)
            }
            guard let value = number("factor") else { return fail(.malformed, "\"factor\" must be a number", type, id) }
            let factor = value ?? DashboardLimits.defaultFilterFactor
            let lo = DashboardLimits.minimumFilterFactor, hi = DashboardLimits.maximumFilterFactor
            guard factor.isFinite, factor >= lo, factor <= hi else {
                return fail(.outOfRange, "filter factor must be \(lo)…\(hi); got \(factor)", type, id)
            }
            return .success(DashboardRequest(control: .filter(DashboardFilter(mode: mode, factor: factor)), id: id))
        case "device":
            guard let device = string("device"), !device.isEmpty else {
                return fail(.malformed, "\"device\" needs a non-empty string \"device\"", type, id)
            }
            return .success(DashboardRequest(control: .device(device), id: id))
        case "state":
            return .success(DashboardRequest(control: .state, id: id))
        default:
            return fail(.unknownType, "unknown control type \"\(type)\"", type, id)
        }
    }
}

/// Any JSON value. Decoding tries `Bool` before numbers, so `true` never passes for `1`.
enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }
}
