import MotionFusion
import MotionSources

/// The streams the dashboard shows, one panel each: the four motion streams, and the pedometer,
/// altimeter and activity when the source supports them.
///
/// The raw values are the names used on the wire (see `PROTOCOL.md`).
package enum DashboardSensor: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// Acceleration in g (Core Motion's sign: face up at rest reads z ≈ −1).
    case accelerometer
    /// Rotation rate in rad/s.
    case gyro
    /// Magnetic field in µT, uncalibrated.
    case magnetometer
    /// Fused device motion: attitude, gravity, user acceleration, rotation rate, calibrated field, heading.
    case deviceMotion
    /// Steps, distance, cadence and pace of `CMPedometer`, counted from the accelerometer; one
    /// reading each time the count grows.
    case pedometer
    /// Relative altitude (m) and pressure (kPa) of `CMAltimeter`, once a second, when the source has
    /// a barometer.
    case altitude
    /// The activity `CMMotionActivityManager` reports (stationary, walking, running, automotive,
    /// cycling or unknown) with its confidence; one reading each time either changes.
    case activity

    /// The four motion streams, whose rate follows the update-interval slider.
    package static let motion: Set<DashboardSensor> = [.accelerometer, .gyro, .magnetometer, .deviceMotion]

    /// Panels are ordered as listed above.
    package static func < (a: DashboardSensor, b: DashboardSensor) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// One device-motion reading, as the dashboard shows it.
package struct DashboardDeviceMotion: Sendable, Hashable {
    /// Roll in radians (rotation about the device's y axis), −π…π.
    package var roll: Double
    /// Pitch in radians (rotation about the device's x axis), −π/2…π/2.
    package var pitch: Double
    /// Yaw in radians (rotation about the vertical axis), −π…π.
    package var yaw: Double
    /// The attitude as a unit quaternion relative to the reference frame.
    package var quaternion: Quaternion
    /// Gravity in the device frame, in g.
    package var gravity: Vector3
    /// Acceleration the user gives the device, gravity removed, in g.
    package var userAcceleration: Vector3
    /// Unbiased rotation rate in rad/s.
    package var rotationRate: Vector3
    /// Calibrated magnetic field in µT.
    package var magneticField: Vector3
    /// Core Motion's calibration accuracy of ``magneticField``: −1 uncalibrated, 0 low, 1 medium, 2 high.
    package var magneticFieldAccuracy: Int
    /// Heading in degrees from the reference frame's north, 0…360, or a negative value when unknown.
    package var heading: Double

    /// Creates a reading; angles in radians, accelerations in g, rates in rad/s, field in µT, heading in degrees.
    package init(
        roll: Double, pitch: Double, yaw: Double, quaternion: Quaternion,
        gravity: Vector3, userAcceleration: Vector3, rotationRate: Vector3,
        magneticField: Vector3, magneticFieldAccuracy: Int, heading: Double
    ) {
        self.roll = roll
        self.pitch = pitch
        self.yaw = yaw
        self.quaternion = quaternion
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.rotationRate = rotationRate
        self.magneticField = magneticField
        self.magneticFieldAccuracy = magneticFieldAccuracy
        self.heading = heading
    }
}

/// One pedometer reading, as `CMPedometerData` reports it since the stream started.
package struct DashboardPedometer: Sendable, Hashable {
    /// Steps counted since the stream started.
    package var steps: Int
    /// Distance walked since the stream started, in metres, when estimated.
    package var distance: Double?
    /// Cadence of the current walking bout in steps per second; `nil` between bouts.
    package var cadence: Double?
    /// Pace of the current walking bout in seconds per metre; `nil` between bouts.
    package var pace: Double?

    /// Creates a reading; distance in m, cadence in steps/s, pace in s/m.
    package init(steps: Int, distance: Double?, cadence: Double?, pace: Double?) {
        self.steps = steps
        self.distance = distance
        self.cadence = cadence
        self.pace = pace
    }
}

/// One altimeter reading, as `CMAltitudeData`.
package struct DashboardAltitude: Sendable, Hashable {
    /// Altitude relative to the first reading of the stream, in metres.
    package var relativeAltitude: Double
    /// Air pressure in kPa.
    package var pressure: Double

    /// Creates a reading; altitude in m, pressure in kPa.
    package init(relativeAltitude: Double, pressure: Double) {
        self.relativeAltitude = relativeAltitude
        self.pressure = pressure
    }
}

/// One activity reading, as `CMMotionActivity`.
package struct DashboardActivity: Sendable, Hashable {
    /// The class, by its `CMMotionActivity` flag name: `stationary`, `walking`, `running`, `automotive`,
    /// `cycling` or `unknown`.
    package var activity: String
    /// `CMMotionActivityConfidence`'s raw value: 0 low, 1 medium, 2 high.
    package var confidence: Int

    /// Creates a reading.
    package init(activity: String, confidence: Int) {
        self.activity = activity
        self.confidence = confidence
    }
}

/// One reading delivered by a ``DashboardFeed``.
package struct DashboardSample: Sendable, Hashable {
    /// What was measured.
    package enum Value: Sendable, Hashable {
        /// A three-axis reading of the accelerometer (g), gyro (rad/s) or magnetometer (µT).
        case vector(Vector3)
        /// A device-motion reading.
        case deviceMotion(DashboardDeviceMotion)
        /// A pedometer reading.
        case pedometer(DashboardPedometer)
        /// An altimeter reading.
        case altitude(DashboardAltitude)
        /// An activity reading.
        case activity(DashboardActivity)
    }

    /// The stream the reading belongs to.
    package var sensor: DashboardSensor
    /// Seconds since boot (`CLOCK_MONOTONIC`), as `CMLogItem.timestamp`.
    package var timestamp: Double
    /// The reading.
    package var value: Value

    /// Creates a three-axis sample for ``DashboardSensor/accelerometer``, ``DashboardSensor/gyro`` or
    /// ``DashboardSensor/magnetometer``.
    package init(sensor: DashboardSensor, timestamp: Double, vector: Vector3) {
        self.sensor = sensor
        self.timestamp = timestamp
        self.value = .vector(vector)
    }

    /// Creates a device-motion sample.
    package init(timestamp: Double, deviceMotion: DashboardDeviceMotion) {
        self.sensor = .deviceMotion
        self.timestamp = timestamp
        self.value = .deviceMotion(deviceMotion)
    }

    /// Creates a pedometer sample; `timestamp` is the time of the last step counted.
    package init(timestamp: Double, pedometer: DashboardPedometer) {
        self.sensor = .pedometer
        self.timestamp = timestamp
        self.value = .pedometer(pedometer)
    }

    /// Creates an altimeter sample.
    package init(timestamp: Double, altitude: DashboardAltitude) {
        self.sensor = .altitude
        self.timestamp = timestamp
        self.value = .altitude(altitude)
    }

    /// Creates an activity sample; `timestamp` is when the activity began, in seconds since boot.
    package init(timestamp: Double, activity: DashboardActivity) {
        self.sensor = .activity
        self.timestamp = timestamp
        self.value = .activity(activity)
    }
}

/// Something a feed reports to the dashboard.
package enum DashboardFeedEvent: Sendable, Hashable {
    /// A new reading.
    case sample(DashboardSample)
    /// The source reported an error for a stream (`nil`: for the whole source). It is shown on the page.
    case error(DashboardSensor?, String)
    /// The device orientation changed (`"faceUp"`, `"portrait"`, …); `nil` when unknown.
    case orientation(String?)
    /// The devices a multi-device source (an MQTT broker) has heard, and the one shown (`nil`: none yet).
    case devices([DashboardDevice], selected: String?)
}

/// One device of a multi-device source, as the page's device picker lists it.
package struct DashboardDevice: Sendable, Hashable, Codable {
    /// The device's identifier (for MQTT: the sender's `deviceId`, or its topic).
    package var id: String
    /// `true` when it has sent nothing for a while.
    package var silent: Bool

    /// Creates an entry.
    package init(id: String, silent: Bool = false) {
        self.id = id
        self.silent = silent
    }
}

/// What the dashboard wants a feed to deliver. Applied as a whole; a feed diffs it against what runs.
package struct DashboardFeedConfiguration: Sendable, Hashable {
    /// The streams that should run. Any other stream should be stopped.
    package var running: Set<DashboardSensor>
    /// The update interval for every running stream, in seconds (0.010…0.100).
    package var interval: Double
    /// The attitude reference frame for device motion, by its Core Motion name
    /// (for example `"xArbitraryZVertical"`); one of ``DashboardSourceDescription/referenceFrames``.
    package var referenceFrame: String?
    /// The device to show, for a multi-device source; `nil` leaves the choice to the feed (the first
    /// device heard).
    package var device: String?

    /// Creates a configuration; `interval` is in seconds.
    package init(running: Set<DashboardSensor>, interval: Double, referenceFrame: String?, device: String? = nil) {
        self.running = running
        self.interval = interval
        self.referenceFrame = referenceFrame
        self.device = device
    }
}

/// What a feed is: the source's name and capabilities, shown in the page's header.
package struct DashboardSourceDescription: Sendable, Hashable {
    /// What one stream can do.
    package struct Stream: Sendable, Hashable {
        /// The lowest rate in Hz, when known.
        package var minimumRate: Double?
        /// The highest rate in Hz, when known.
        package var maximumRate: Double?
        /// The largest magnitude one axis can read, in the stream's unit, when known.
        package var range: Double?

        /// Creates a description; rates in Hz, range in the stream's unit.
        package init(minimumRate: Double? = nil, maximumRate: Double? = nil, range: Double? = nil) {
            self.minimumRate = minimumRate
            self.maximumRate = maximumRate
            self.range = range
        }
    }

    /// A short identifier such as `sim:handheld`.
    package var identifier: String
    /// A human-readable name such as `Simulated handheld device`.
    package var name: String
    /// The streams that are available, with what is known of them. A stream absent here is unavailable.
    package var streams: [DashboardSensor: Stream]
    /// The attitude reference frames device motion can use, by Core Motion name, in preference order.
    package var referenceFrames: [String]
    /// Free-form details (mount matrix, driver, …), in order.
    package var details: [(String, String)]

    /// Creates a description.
    package init(
        identifier: String, name: String, streams: [DashboardSensor: Stream],
        referenceFrames: [String] = [], details: [(String, String)] = []
    ) {
        self.identifier = identifier
        self.name = name
        self.streams = streams
        self.referenceFrames = referenceFrames
        self.details = details
    }

    /// Builds a description from a ``SourceInfo``: its three raw sensors, plus device motion when
    /// `deviceMotion` is `true` (rates of device motion are those of the gyro).
    package init(info: SourceInfo, deviceMotion: Bool, referenceFrames: [String]) {
        var streams: [DashboardSensor: Stream] = [:]
        for (kind, capability) in info.sensors {
            let sensor: DashboardSensor
            switch kind {
            case .accelerometer: sensor = .accelerometer
            case .gyro: sensor = .gyro
            case .magnetometer: sensor = .magnetometer
            case .pressure: continue  // the altitude stream comes from the barometer, not from the source
            }
            streams[sensor] = Stream(
                minimumRate: capability.minimumRate, maximumRate: capability.maximumRate, range: capability.range)
        }
        if deviceMotion {
            let gyro = info.sensors[.gyro]
            streams[.deviceMotion] = Stream(minimumRate: gyro?.minimumRate, maximumRate: gyro?.maximumRate)
        }
        self.init(
            identifier: info.identifier, name: info.name, streams: streams,
            referenceFrames: deviceMotion ? referenceFrames : [], details: info.details)
    }

    /// Equal when every field, details included, is equal.
    package static func == (a: Self, b: Self) -> Bool {
        a.identifier == b.identifier && a.name == b.name && a.streams == b.streams
            && a.referenceFrames == b.referenceFrames
            && a.details.map(\.0) == b.details.map(\.0) && a.details.map(\.1) == b.details.map(\.1)
    }

    /// Hashes the identifier and name.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(name)
    }
}

/// Where the dashboard's data comes from: normally a `CMMotionManager` (see ``MotionManagerFeed``),
/// in tests a scripted feed.
///
/// ## Threading
/// ``apply(_:)`` is called from any thread, one call at a time, each time the page changes what runs.
/// Events go to the sink given to ``connect(_:)``, from any thread; the sink is cheap and never blocks.
package protocol DashboardFeed: AnyObject, Sendable {
    /// What the feed is and what it can deliver. Constant for the life of the feed.
    var sourceDescription: DashboardSourceDescription { get }

    /// Sets the one sink that receives the feed's events. Called once, before the first ``apply(_:)``.
    func connect(_ sink: @escaping @Sendable (DashboardFeedEvent) -> Void)

    /// Starts, stops and re-times streams so that exactly `configuration` runs. An empty
    /// ``DashboardFeedConfiguration/running`` stops everything.
    func apply(_ configuration: DashboardFeedConfiguration)
}
