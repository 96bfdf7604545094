/// What the user is doing, as decided by ``ActivityClassifier``. Raw values are stable (recorded in
/// tests and reports).
@frozen
public enum ActivityKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not enough data yet, or motion that fits no class (shaking, fidgeting, rotating the device).
    case unknown = 0
    /// The device is at rest or only held: no steps, little motion, little rotation.
    case stationary = 1
    /// Steps at a walking cadence.
    case walking = 2
    /// Steps at a running cadence or with running impacts.
    case running = 3
    /// No steps; strong road vibration with a rocking at the pedalling cadence.
    case cycling = 4
    /// No steps; steady vehicle vibration with little rotation.
    case automotive = 5

    /// The lower-case name (`"walking"`, …).
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .stationary: "stationary"
        case .walking: "walking"
        case .running: "running"
        case .cycling: "cycling"
        case .automotive: "automotive"
        }
    }
}

/// How sure ``ActivityClassifier`` is of its current class; raw values are Core Motion's
/// `CMMotionActivityConfidence`.
@frozen
public enum ActivityConfidence: Int, Sendable, Hashable, Comparable {
    /// Just switched, or unknown.
    case low = 0
    /// The class has held for twice its confirmation time.
    case medium = 1
    /// The class has held for six times its confirmation time.
    case high = 2

    /// Orders low < medium < high.
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Thresholds and time constants of ``ActivityClassifier``. Values only; safe from any thread.
@frozen
public struct ActivityClassifierParameters: Hashable, Sendable {
    /// Time constant (s) of the running statistics (mean and variance of the magnitude, band energies,
    /// gyro energy): an exponential window of about twice this length. Default 2 s (the 2.56 s windows
    /// usual in activity recognition).
    public var windowTimeConstant: Double
    /// Largest standard deviation (g) of the acceleration magnitude at rest. Default 0.05 g: a
    /// hand-held phone (tremor and sway, 0.01–0.03 g) is stationary; a walk (0.2–0.5 g) is not.
    public var stationaryDeviation: Double
    /// Largest RMS rotation rate (rad/s) at rest, when a gyroscope is present. Default 0.35 rad/s.
    public var stationaryRotation: Double
    /// Cadence (steps/s) from which a bout of steps is running. Default 2.5 steps/s (150 steps/min):
    /// walking cadences stay under about 2.2 steps/s even when fast (Tudor-Locke et al. 2018), running
    /// ones are above about 2.5.
    public var runningCadence: Double
    /// Standard deviation (g) of the magnitude from which a bout of steps is running whatever its
    /// cadence (the impacts of running reach 2–3 g). Default 0.75 g.
    public var runningDeviation: Double
    /// Corner frequency (Hz) between body motion (below) and vibration (above). Default 5 Hz: gait and
    /// pedalling stay under 4 Hz, engines and road surfaces shake vehicles at 5–30 Hz.
    public var vibrationCutoff: Double
    /// Smallest RMS vibration (g, of the magnitude above ``vibrationCutoff``) of a moving vehicle.
    /// Default 0.02 g: car floors ride at about 0.3–0.6 m/s² (0.03–0.06 g) RMS on ordinary roads
    /// (ISO 2631-1 comfort scale), mostly vertical; the magnitude sees about two thirds of it after the
    /// one-pole high-pass.
    public var vehicleVibration: Double
    /// Largest RMS rotation rate (rad/s) of a device in a car (mounted or lying down). Default 0.2 rad/s.
    public var vehicleRotation: Double
    /// Smallest RMS rotation rate (rad/s) of a bicycle's rocking at the pedalling cadence. Default 0.15 rad/s.
    public var cyclingRotation: Double
    /// Smallest RMS vibration (g, as ``vehicleVibration``) on a bicycle (stiff tyres, no suspension).
    /// Default 0.04 g.
    public var cyclingVibration: Double
    /// How long (s) a new walking, running, stationary or unknown class must be seen before it is
    /// reported. Default 2.5 s.
    public var confirmationTime: Double
    /// How long (s) a vehicle class (cycling, automotive) must be seen before it is reported. Default 8 s.
    public var vehicleConfirmationTime: Double

    /// The defaults (see each property).
    public init(windowTimeConstant: Double = 2, stationaryDeviation: Double = 0.05, stationaryRotation: Double = 0.35,
                runningCadence: Double = 2.5, runningDeviation: Double = 0.75, vibrationCutoff: Double = 5,
                vehicleVibration: Double = 0.02, vehicleRotation: Double = 0.2, cyclingRotation: Double = 0.15,
                cyclingVibration: Double = 0.04, confirmationTime: Double = 2.5, vehicleConfirmationTime: Double = 8) {
        self.windowTimeConstant = windowTimeConstant
        self.stationaryDeviation = stationaryDeviation
        self.stationaryRotation = stationaryRotation
        self.runningCadence = runningCadence
        self.runningDeviation = runningDeviation
        self.vibrationCutoff = vibrationCutoff
        self.vehicleVibration = vehicleVibration
        self.vehicleRotation = vehicleRotation
        self.cyclingRotation = cyclingRotation
        self.cyclingVibration = cyclingVibration
        self.confirmationTime = confirmationTime
        self.vehicleConfirmationTime = vehicleConfirmationTime
    }
}

/// Decides stationary, walking, running, cycling or automotive from the accelerometer (and the gyroscope
/// when there is one), one sample per call.
///
/// A small decision tree on running statistics, in the tradition of the feature-threshold classifiers
/// of L. Bao and S. Intille, "Activity recognition from user-annotated acceleration data", *Pervasive*
/// 2004, and S. Reddy et al., "Using mobile phones to determine transportation modes", *ACM TOSN* 6(2),
/// 2010 (magnitude variance and band energies, stationary / walk / run / bike / motorised), with the
/// step detector's cadence as the gait feature and the vehicle cues (sustained vibration without steps)
/// of S. Hemminki, P. Nurmi and S. Tarkoma, "Accelerometer-based transportation mode detection on
/// smartphones", *SenSys* 2013. Written from those descriptions; no code was ported.
///
/// Features, all orientation-free and updated per sample with exponential windows
/// (``ActivityClassifierParameters/windowTimeConstant``):
/// - `sd`: standard deviation of the acceleration magnitude `|a|` (g);
/// - `vibration`: RMS of `|a|` above ``ActivityClassifierParameters/vibrationCutoff`` (g);
/// - `rotation`: RMS of the rotation rate `|ω|` (rad/s), when gyroscope samples arrive;
/// - the ``StepDetector``'s walking bout and cadence.
///
/// The candidate class, re-evaluated at every sample:
/// 1. a step bout: running when cadence ≥ ``ActivityClassifierParameters/runningCadence`` or
///    `sd` ≥ ``ActivityClassifierParameters/runningDeviation``, else walking;
/// 2. `sd` < ``ActivityClassifierParameters/stationaryDeviation`` and rotation small: stationary;
/// 3. vibration ≥ ``ActivityClassifierParameters/cyclingVibration`` with rocking
///    (rotation ≥ ``ActivityClassifierParameters/cyclingRotation``): cycling;
/// 4. vibration ≥ ``ActivityClassifierParameters/vehicleVibration``, carrying at least half of `sd`
///    (a vehicle shakes; a body sways), with little rotation: automotive;
/// 5. otherwise unknown.
///
/// Hysteresis: the reported class changes only after the candidate has stayed the same for
/// ``ActivityClassifierParameters/confirmationTime`` (``ActivityClassifierParameters/vehicleConfirmationTime``
/// for the vehicle classes, whose cues are weaker). Confidence grows with the time the reported class
/// has held. Without a gyroscope, cycling cannot be told (it needs the rocking) and the rotation tests
/// are skipped.
///
/// No Foundation, no allocation per sample. A value type: one per stream, not shared between threads
/// while it is updated.
@frozen
public struct ActivityClassifier: Sendable {
    /// The parameters in use.
    public let parameters: ActivityClassifierParameters
    /// The step detector whose bouts and cadence feed the classifier.
    public private(set) var steps: StepDetector

    /// The reported class.
    public private(set) var activity: ActivityKind = .unknown
    /// The confidence in ``activity``.
    public private(set) var confidence: ActivityConfidence = .low
    /// When (s, the samples' clock) the reported class began: the start of the run of samples that
    /// confirmed it. 0 before the first change.
    public private(set) var activityStart: Double = 0

    /// The current candidate (before hysteresis).
    public private(set) var candidate: ActivityKind = .unknown

    @usableFromInline var started = false
    @usableFromInline var firstTime = 0.0
    @usableFromInline var lastTime = 0.0
    @usableFromInline var mean = 1.0
    @usableFromInline var meanSquare = 0.0
    @usableFromInline var lowPass = 1.0
    @usableFromInline var vibrationSquare = 0.0
    @usableFromInline var rotationSquare = 0.0
    @usableFromInline var lastGyroTime = -Double.infinity
    @usableFromInline var candidateSince = 0.0

    /// A classifier with `parameters` and a step detector with `stepParameters` (defaults if omitted).
    public init(parameters: ActivityClassifierParameters = ActivityClassifierParameters(),
                stepParameters: StepDetectorParameters = StepDetectorParameters()) {
        self.parameters = parameters
        steps = StepDetector(parameters: stepParameters)
    }

    /// Standard deviation (g) of the acceleration magnitude over the recent window.
    public var magnitudeDeviation: Double { max(meanSquare - mean * mean, 0).squareRoot() }
    /// RMS (g) of the magnitude above the vibration cut-off over the recent window.
    public var vibration: Double { vibrationSquare.squareRoot() }
    /// RMS rotation rate (rad/s) over the recent window, or `nil` when no gyroscope sample arrived
    /// in the last second.
    public var rotation: Double? { lastTime - lastGyroTime <= 1 ? rotationSquare.squareRoot() : nil }

    /// Feeds one gyroscope sample (rad/s). Non-finite samples are ignored. Gyroscope and accelerometer
    /// samples may interleave in any order; classification happens on accelerometer samples.
    public mutating func processRotationRate(timestamp t: Double, x: Double, y: Double, z: Double) {
        guard t.isFinite, x.isFinite, y.isFinite, z.isFinite else { return }
        let r2 = x * x + y * y + z * z
        let dt = lastGyroTime.isFinite ? t - lastGyroTime : 0
        if !lastGyroTime.isFinite || dt > 1 {
            rotationSquare = r2
        } else if dt > 0 {
            rotationSquare += (r2 - rotationSquare) * StepDetector.gain(dt, parameters.windowTimeConstant)
        } else {
            return
        }
        lastGyroTime = t
    }

    /// Feeds one accelerometer sample (g, either sign convention) and returns whether the reported
    /// activity or its confidence changed.
    ///
    /// A sample not later than the previous one, or not finite, is ignored. A gap longer than 5 s
    /// restarts the statistics and reports unknown until a window has filled again.
    @discardableResult
    public mutating func process(timestamp t: Double, x: Double, y: Double, z: Double) -> Bool {
        guard t.isFinite, x.isFinite, y.isFinite, z.isFinite else { return false }
        let p = parameters
        let m = (x * x + y * y + z * z).squareRoot()
        steps.process(timestamp: t, x: x, y: y, z: z)
        if !started || t - lastTime > 5 {
            let was = (activity, confidence)
            started = true
            firstTime = t
            lastTime = t
            mean = m
            meanSquare = m * m
            lowPass = m
            vibrationSquare = 0
            candidate = .unknown
            candidateSince = t
            activity = .unknown
            confidence = .low
            activityStart = t
            return was != (activity, confidence)
        }
        let dt = t - lastTime
        guard dt > 0 else { return false }
        lastTime = t
        let w = StepDetector.gain(dt, p.windowTimeConstant)
        mean += (m - mean) * w
        meanSquare += (m * m - meanSquare) * w
        lowPass += (m - lowPass) * StepDetector.gain(dt, 1 / (2 * Double.pi * p.vibrationCutoff))
        let high = m - lowPass
        vibrationSquare += (high * high - vibrationSquare) * w

        let now = t - firstTime < p.windowTimeConstant ? ActivityKind.unknown : classify()
        if now != candidate {
            candidate = now
            candidateSince = t
        }
        let before = (activity, confidence)
        let confirm = candidate == .cycling || candidate == .automotive ? p.vehicleConfirmationTime : p.confirmationTime
        if candidate != activity, t - candidateSince >= confirm {
            activity = candidate
            activityStart = candidateSince
        }
        let held = t - activityStart
        let own = activity == .cycling || activity == .automotive ? p.vehicleConfirmationTime : p.confirmationTime
        confidence = activity == .unknown ? .low : held >= 6 * own ? .high : held >= 2 * own ? .medium : .low
        return before != (activity, confidence)
    }

    /// The class the current features point to, before hysteresis.
    @usableFromInline
    func classify() -> ActivityKind {
        let p = parameters
        let sd = magnitudeDeviation
        let rot = rotation
        if steps.inBout, let period = steps.stepPeriod, period > 0 {
            return 1 / period >= p.runningCadence || sd >= p.runningDeviation ? .running : .walking
        }
        if sd < p.stationaryDeviation, (rot ?? 0) < p.stationaryRotation, vibration < p.vehicleVibration {
            return .stationary
        }
        let vib = vibration
        if let rot, vib >= p.cyclingVibration, rot >= p.cyclingRotation, sd < p.runningDeviation {
            return .cycling
        }
        if vib >= p.vehicleVibration, (rot ?? 0) < p.vehicleRotation, vib >= 0.5 * sd {
            return .automotive
        }
        return .unknown
    }
}
