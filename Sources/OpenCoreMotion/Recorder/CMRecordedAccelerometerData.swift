import Foundation

/// One accelerometer sample read back from a ``CMSensorRecorder`` recording.
///
/// As every ``CMLogItem``, ``CMLogItem/timestamp`` is in seconds since boot; ``startDate`` is the
/// same instant on the wall clock. Samples are immutable and may be passed between threads freely.
open class CMRecordedAccelerometerData: CMAccelerometerData {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable, so sharing it between threads is safe.
    private let storedIdentifier: UInt64
    private let storedStartDate: Date

    /// The batch the sample was recorded in: samples are written in batches (one every half second
    /// at most), each with its own identifier, larger than every earlier batch's and never reused.
    open var identifier: UInt64 { storedIdentifier }

    /// The wall-clock time at which the sample was taken.
    open var startDate: Date { storedStartDate }

    /// Creates a zero sample with identifier 0 at the reference date (2001-01-01 UTC), as Apple's `init()`.
    public override init() {
        storedIdentifier = 0
        storedStartDate = zeroDate
        super.init()
    }

    /// Creates a sample (beyond Apple, whose samples come only from the recorder).
    ///
    /// - Parameters:
    ///   - identifier: the batch identifier.
    ///   - startDate: the wall-clock time of the sample.
    ///   - acceleration: in g, device frame, gravity included (face up: z ≈ −1).
    ///   - timestamp: seconds since boot.
    public init(identifier: UInt64, startDate: Date, acceleration: CMAcceleration, timestamp: TimeInterval) {
        storedIdentifier = identifier
        storedStartDate = startDate
        super.init(acceleration: acceleration, timestamp: timestamp)
    }

    /// Decodes a sample written by ``encode(with:)``.
    public required init?(coder: NSCoder) {
        storedIdentifier = UInt64(bitPattern: coder.decodeInt64(forKey: "identifier"))
        storedStartDate = coder.decodeDate(forKey: "startDate")
        super.init(coder: coder)
    }

    /// Writes the sample through its accessors.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(Int64(bitPattern: identifier), forKey: "identifier")
        coder.encodeDate(startDate, forKey: "startDate")
    }

    open override var description: String {
        let a = acceleration
        return "CMRecordedAccelerometerData(identifier: \(identifier), startDate: \(startDate), x: \(a.x), y: \(a.y), z: \(a.z), timestamp: \(timestamp))"
    }
}
