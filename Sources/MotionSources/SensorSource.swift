import MotionFusion

/// The raw sensors a source can carry: the three motion sensors and the barometer.
public enum SensorKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Specific force in g, Core Motion's sign: a device lying face up at rest reads z ≈ −1.
    case accelerometer
    /// Angular rate in rad/s about the device axes, right-handed.
    case gyro
    /// Magnetic flux density in µT, in the device frame, uncalibrated (hard iron included).
    case magnetometer
    /// Air pressure in kPa (Core Motion's unit, as `CMAltitudeData.pressure`) in the value's `x`; `y` and
    /// `z` are 0. A barometer run as a source (``PolledBarometerSource``) delivers it; motion fusion and
    /// the motion manager ignore it.
    case pressure

    /// The three motion sensors (accelerometer, gyro, magnetometer), in that order: what motion fusion,
    /// the motion manager and the motion recording formats deal in.
    public static let motion: [SensorKind] = [.accelerometer, .gyro, .magnetometer]

    /// Core Motion's unit of the sensor's readings: `g`, `rad/s`, `µT` or `kPa`.
    public var unit: String {
        switch self {
        case .accelerometer: "g"
        case .gyro: "rad/s"
        case .magnetometer: "µT"
        case .pressure: "kPa"
        }
    }

    /// Whether this is one of the three ``motion`` sensors (not the barometer).
    @inlinable
    public var isMotion: Bool { self != .pressure }
}

/// One timestamped reading of one sensor, already in Core Motion's units and device frame.
///
/// Sources convert exactly once, at their boundary: acceleration in g (face up reads z ≈ −1),
/// rotation rate in rad/s, magnetic field in µT. ``timestamp`` is in seconds since boot on
/// `CLOCK_MONOTONIC`, the base of `ProcessInfo.processInfo.systemUptime`.
@frozen
public struct RawSample: Sendable, Hashable {
    /// Which sensor produced the reading.
    public var sensor: SensorKind
    /// Seconds since boot (`CLOCK_MONOTONIC`).
    public var timestamp: Double
    /// The reading, in the unit of ``sensor``.
    public var value: Vector3

    /// Creates a sample.
    @inlinable
    public init(sensor: SensorKind, timestamp: Double, value: Vector3) {
        self.sensor = sensor
        self.timestamp = timestamp
        self.value = value
    }
}

/// What a source can deliver for one sensor.
public struct SensorCapability: Sendable, Hashable, Codable {
    /// The lowest sampling rate the source supports, in Hz.
    public var minimumRate: Double
    /// The highest sampling rate the source supports, in Hz.
    public var maximumRate: Double
    /// The largest magnitude one axis can read, in the sensor's unit (g, rad/s or µT); `nil` if unknown.
    public var range: Double?
    /// The smallest step between two readings, in the sensor's unit; `nil` if unknown.
    public var resolution: Double?

    /// Creates a capability. `minimumRate` and `maximumRate` are in Hz.
    public init(minimumRate: Double, maximumRate: Double, range: Double? = nil, resolution: Double? = nil) {
        self.minimumRate = minimumRate
        self.maximumRate = maximumRate
        self.range = range
        self.resolution = resolution
    }

    /// Clamps a requested rate (Hz) into ``minimumRate``…``maximumRate``. NaN and non-positive
    /// values give ``maximumRate`` (the fastest rate), `+∞` gives ``maximumRate`` too.
    public func clamp(rate: Double) -> Double {
        guard rate.isFinite, rate > 0 else { return maximumRate }
        return min(max(rate, minimumRate), maximumRate)
    }
}

/// A description of a source: its name and the sensors it carries.
public struct SourceInfo: Sendable, Hashable {
    /// A short identifier, such as `sim:handheld` or `iio:iio:device0`.
    public var identifier: String
    /// A human-readable name, such as `Simulated handheld device`.
    public var name: String
    /// The sensors this source provides, with their rates and ranges.
    public var sensors: [SensorKind: SensorCapability]
    /// Free-form details shown by `coremotion sensors` (mount matrix, buffered access, …), in order.
    public var details: [(String, String)]

    /// Creates a description.
    public init(identifier: String, name: String, sensors: [SensorKind: SensorCapability], details: [(String, String)] = []) {
        self.identifier = identifier
        self.name = name
        self.sensors = sensors
        self.details = details
    }

    public static func == (a: SourceInfo, b: SourceInfo) -> Bool {
        a.identifier == b.identifier && a.name == b.name && a.sensors == b.sensors
            && a.details.map(\.0) == b.details.map(\.0) && a.details.map(\.1) == b.details.map(\.1)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(name)
    }
}

/// Which sensors a consumer wants running, and how fast.
public struct SensorDemand: Sendable, Hashable {
    /// Requested rate in Hz for each sensor that should run. A sensor absent from the map is off.
    public var rates: [SensorKind: Double]

    /// How long, in seconds, a sample may wait before it is delivered, so that a source can deliver
    /// several at once and wake less often: the report latency of Android's sensor batching, or an
    /// IIO buffer's watermark. Default 0: every sample as soon as it is taken. Samples keep their own
    /// timestamps and order either way. A source may deliver sooner than this; none later.
    public var maximumLatency: Double

    /// Creates a demand from per-sensor rates in Hz and a maximum latency in seconds (default 0).
    public init(rates: [SensorKind: Double] = [:], maximumLatency: Double = 0) {
        self.rates = rates
        self.maximumLatency = maximumLatency
    }

    /// No sensor running: applying it stops the source.
    public static let none = SensorDemand()

    /// `true` when no sensor is wanted.
    public var isEmpty: Bool { rates.isEmpty }
}

/// Something a source reports to its sink.
public enum SourceEvent: Sendable, Hashable {
    /// A new reading.
    case sample(RawSample)
    /// The source failed and has stopped; no further event follows for the current demand.
    case failed(SourceError)
    /// The source has had no data for a while, or lost its connection, and keeps trying (non-fatal).
    /// The hub passes the error once to each consumer of the sensors concerned, keeps them registered, and a
    /// later `.sample` resumes delivery. `failed` remains the fatal, final event.
    case interrupted(SourceError)
    /// The source ran out of data (a replay reached its end) and has stopped.
    case finished
}

/// Why a source could not start or had to stop.
public struct SourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad kind of failure; the API layer maps it to a `CMError` code.
    public enum Kind: String, Sendable, Hashable {
        /// No such device, or the requested sensor is absent.
        case unavailable
        /// The device exists but this process may not open it.
        case permissionDenied
        /// The device vanished while streaming (unplugged, `ENODEV`).
        case deviceRemoved
        /// Input that does not parse: a malformed replay line, a sysfs value that is not a number.
        case malformedInput
        /// A timestamp went backwards.
        case timestampRegression
        /// Another I/O failure.
        case io
    }

    /// The broad kind of failure.
    public var kind: Kind
    /// One line saying what went wrong and, where there is one, how to fix it.
    public var message: String
    /// The file or device involved, when there is one.
    public var path: String?
    /// The 1-based line of the input involved, when there is one.
    public var line: Int?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, path: String? = nil, line: Int? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
        self.line = line
    }

    /// `path:line: message`, with the parts that are known.
    public var description: String {
        var prefix = ""
        if let path { prefix += path + ":" }
        if let line { prefix += "\(line):" }
        return prefix.isEmpty ? message : prefix + " " + message
    }
}

/// Where raw motion samples come from: a simulator, a recording, an IIO or evdev device, a phone.
///
/// A source is driven by a single controller (in OpenCoreMotion, one hub per source shared by every
/// `CMMotionManager` using it), which calls ``apply(_:sink:)`` whenever the set of consumers changes.
///
/// ## Threading
/// ``apply(_:sink:)`` may be called from any thread. Events reach the sink on a thread the source owns,
/// one at a time and in timestamp order per sensor; the sink must not block for long. After `apply`
/// returns with an empty demand, the source calls the sink no more.
public protocol SensorSource: AnyObject, Sendable {
    /// What this source is and what it carries. Constant for the life of the source.
    var info: SourceInfo { get }

    /// Replaces the current demand and sink. An empty demand stops the source.
    ///
    /// - Parameters:
    ///   - demand: the sensors to run and the rate wanted for each, in Hz. The source clamps each rate
    ///     to its capability and may pick the next rate it supports at or above the request.
    ///   - sink: receives samples, then at most one `.failed` or `.finished`.
    /// - Returns: the rate in Hz really running for each sensor of `demand`.
    /// - Throws: ``SourceError`` when the source cannot start (device absent, permission denied).
    @discardableResult
    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double]
}
