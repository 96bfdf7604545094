import Foundation
import MotionFusion
import MotionSources

/// What a phone sends beyond the three raw sensors, already in Core Motion's units and frames.
package enum PhoneQuantity: Sendable, Hashable {
    /// Air pressure in kPa (`CMAltitudeData.pressure`'s unit).
    case pressure(Double)
    /// The phone's own attitude: a unit quaternion mapping the device frame to a reference frame with
    /// z up and x toward north (Core Motion's `xMagneticNorthZVertical`, or `xTrueNorthZVertical` where
    /// the app says so), as `CMAttitude.quaternion`. See ``PhoneFrames``.
    case attitude(Quaternion)
    /// The phone's own gravity estimate in g, Core Motion's sign (face up reads z ≈ −1), device frame.
    case gravity(Vector3)

    /// A short name: `pressure`, `attitude` or `gravity`.
    package var name: String {
        switch self {
        case .pressure: "pressure"
        case .attitude: "attitude"
        case .gravity: "gravity"
        }
    }
}

/// One reading of a ``PhoneQuantity`` on the phone's clock.
package struct PhoneExtraReading: Sendable, Hashable {
    /// The phone's time in seconds on its own clock, `nil` when the message has none.
    package var phoneTime: Double?
    /// The reading.
    package var quantity: PhoneQuantity

    /// Creates a reading.
    package init(phoneTime: Double?, quantity: PhoneQuantity) {
        self.phoneTime = phoneTime
        self.quantity = quantity
    }
}

/// Frame conversions for the phone's own attitude, done once at the boundary.
///
/// Both platforms use the same device frame (x right, y toward the top of the screen, z out of it).
/// The reference frames differ: Android's rotation vector (and phyphox's `attitude` on both platforms,
/// which rotates iOS's quaternion into Android's frame) maps the device frame to **east-north-up**
/// (x east, y magnetic north, z up); Core Motion's `xMagneticNorthZVertical` is **north-west-up**
/// (x north, y west, z up). A vector's coordinates go from ENU to NWU by `x' = y, y' = −x, z' = z`, a
/// rotation of −90° about z, so `q_CoreMotion = (cos 45°, 0, 0, −sin 45°) ⊗ q_Android` (the inverse
/// of phyphox's iOS conversion, `q_Android = (cos 45°, 0, 0, sin 45°) ⊗ q_iOS`,
/// `ExperimentSensorInput.swift`). iOS apps that send `CMAttitude` itself (SensorLog, Sensor Logger
/// without "Standardise Units & Frames") need no change. Gravity converts like acceleration.
package enum PhoneFrames {
    private static let half = 0.5.squareRoot()
    /// The rotation from east-north-up to north-west-up reference coordinates.
    package static let enuToNWU = Quaternion(w: half, x: 0, y: 0, z: -half)

    /// An Android-style quaternion (device → ENU), in Core Motion's reference (device → NWU), normalised;
    /// `nil` for a zero or non-finite one.
    package static func coreMotionAttitude(fromAndroid q: Quaternion) -> Quaternion? {
        guard q.isFinite, q.length > 1e-6 else { return nil }
        return (enuToNWU * q).normalized
    }

    /// A Core Motion quaternion checked and normalised; `nil` for a zero or non-finite one.
    package static func coreMotionAttitude(fromApple q: Quaternion) -> Quaternion? {
        guard q.isFinite, q.length > 1e-6 else { return nil }
        return q.normalized
    }

    /// Android's rotation vector `(x, y, z[, w])`, the vector part of the unit quaternion; `w` is
    /// derived when absent (`w = √(1 − x² − y² − z²)`, 0 when rounding makes that negative).
    package static func androidQuaternion(rotationVector v: [Double]) -> Quaternion? {
        guard v.count >= 3 else { return nil }
        let w = v.count >= 4 ? v[3] : max(0, 1 - v[0] * v[0] - v[1] * v[1] - v[2] * v[2]).squareRoot()
        return Quaternion(w: w, x: v[0], y: v[1], z: v[2])
    }
}

/// The latest value of each ``PhoneQuantity`` a ``PhoneSource`` received, on this machine's clock.
package struct PhoneExtras: Sendable, Hashable {
    /// Per quantity name: readings accepted, the last value and its host time (s since boot).
    package struct Latest: Sendable, Hashable {
        /// Readings accepted.
        package var count = 0
        /// The last reading.
        package var value: PhoneQuantity
        /// Its host time, seconds since boot.
        package var timestamp: Double
    }

    /// Per quantity name (`pressure`, `attitude`, `gravity`).
    package var latest: [String: Latest] = [:]

    /// Creates an empty record.
    package init() {}

    /// The last pressure in kPa and its host time.
    package var pressure: (kPa: Double, timestamp: Double)? {
        if let l = latest["pressure"], case .pressure(let p) = l.value { return (p, l.timestamp) }
        return nil
    }

    /// The last attitude and its host time.
    package var attitude: (quaternion: Quaternion, timestamp: Double)? {
        if let l = latest["attitude"], case .attitude(let q) = l.value { return (q, l.timestamp) }
        return nil
    }

    /// The last gravity (g) and its host time.
    package var gravity: (g: Vector3, timestamp: Double)? {
        if let l = latest["gravity"], case .gravity(let v) = l.value { return (v, l.timestamp) }
        return nil
    }
}

/// The pressure a phone sends, as the barometer behind `CMAltimeter`.
///
/// The first read starts the phone source (connecting or listening) and keeps it running on its own,
/// whether or not a `CMMotionManager` uses the same source, until the barometer is released; a source
/// that cannot start (a port in use) makes that read throw, which `CMAltimeter` reports once.
/// ``readPressure(at:)`` returns the phone's latest pressure (kPa); before the first one, and when the
/// last is older than the source's `silence`, it returns NaN, which `CMAltimeter` skips, so updates
/// pause while the phone is silent and resume with its data.
///
/// ## Threading
/// Safe from any thread.
package final class PhoneBarometer: BarometerSource {
    /// The phone source read.
    package let source: PhoneSource
    package var identifier: String { source.info.identifier }
    package var name: String { "barometer of the \(source.info.name)" }
    package var virtualStartTime: Double? { nil }
    private let holding = Locked(false)

    /// Creates a barometer on `source`; nothing starts before the first read.
    package init(source: PhoneSource) {
        self.source = source
    }

    deinit {
        if holding.withLock({ $0 }) { source.release() }
    }

    package func readPressure(at timestamp: Double) throws(SourceError) -> Double {
        let start = holding.withLock { h -> Bool in
            defer { h = true }
            return !h
        }
        if start {
            do {
                try source.hold()
            } catch {
                holding.withLock { $0 = false }
                throw error
            }
        }
        guard let p = source.extras.pressure, MonotonicClock.now() - p.timestamp <= source.silence else { return .nan }
        return p.kPa
    }
}

extension PhoneSource {
    private static let registry = Locked<[String: WeakPhoneSource]>([:])

    /// The live source for `spec` (by its full text, parameters included) if one exists, else a new
    /// one: so `CMMotionManager` and `CMAltimeter` given the same phone spec share one connection or
    /// listening socket.
    /// - Throws: ``SourceError`` for a bad spec.
    package static func shared(spec text: String) throws(SourceError) -> PhoneSource {
        if let live = registry.withLock({ $0[text]?.source }) { return live }
        let made = try PhoneSource(spec: text)
        return registry.withLock { map in
            if let live = map[text]?.source { return live }
            map = map.filter { $0.value.source != nil }
            map[text] = WeakPhoneSource(source: made)
            return made
        }
    }
}

private struct WeakPhoneSource: Sendable {
    weak let source: PhoneSource?
}

extension SourceProvider {
    /// Phone apps streaming over the network: `sensorlogger://`, `sensorserver://`, `phyphox://`,
    /// `sensorlog://`, `hyperimu://HOST:PORT` (``PhoneSource/shared(spec:)``: one connection per spec), and
    /// the pressure of the apps that send it as a barometer (``PhoneBarometer``; not HyperIMU). Finds
    /// nothing by itself.
    package static let phones = SourceProvider(
        schemes: SourceSchemes.phones,
        usage: "sensorlogger://, sensorserver://, phyphox://, sensorlog://, hyperimu://HOST:PORT",
        makeSource: { spec, _ throws(SourceError) in try PhoneSource.shared(spec: spec) },
        makeBarometer: { spec, _ in
            guard SourceSchemes.scheme(of: spec) != "hyperimu" else { return nil }  // HyperIMU sends no pressure
            return (try? PhoneSource.shared(spec: spec)).map { PhoneBarometer(source: $0) }
        }
    )
}
