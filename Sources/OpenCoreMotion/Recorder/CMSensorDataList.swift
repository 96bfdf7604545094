import Foundation

/// The accelerometer samples a ``CMSensorRecorder`` query returned, oldest first.
///
/// As on Apple platforms the list is enumerated through `NSFastEnumeration`; Swift code usually
/// adds the conformance to `Sequence` itself:
///
/// ```swift
/// extension CMSensorDataList: Sequence {
///     public typealias Iterator = NSFastEnumerationIterator
///     public func makeIterator() -> NSFastEnumerationIterator { NSFastEnumerationIterator(self) }
/// }
/// for data in list { if let sample = data as? CMRecordedAccelerometerData { … } }
/// ```
///
/// On Linux, where Foundation lacks fast enumeration, OpenCoreMotion declares `NSFastEnumeration`,
/// `NSFastEnumerationState` and `NSFastEnumerationIterator` so that this code builds unchanged.
/// Beyond Apple, ``samples`` gives the typed array directly.
///
/// The list holds the samples in memory (at 50 Hz, 12 hours is 2.16 million samples). It is
/// immutable and may be passed between threads freely.
open class CMSensorDataList: NSObject, NSFastEnumeration {
    // Not `Sendable`, as Apple's (a subclass would have to restate it; see Delivery/Unchecked.swift),
    // yet thread-safe: its stored state is immutable or behind a `Locked`, so sharing it between threads is safe.
    /// The samples, oldest first (beyond Apple).
    public let samples: [CMRecordedAccelerometerData]

    /// Creates an empty list, as Apple's `init()`.
    public override init() {
        samples = []
        super.init()
    }

    /// Creates a list (beyond Apple, whose lists come only from the recorder).
    public init(samples: [CMRecordedAccelerometerData]) {
        self.samples = samples
        super.init()
    }

    #if canImport(ObjectiveC)
    /// The object buffer of `NSFastEnumeration` as the platform declares it.
    public typealias FastEnumerationBuffer = AutoreleasingUnsafeMutablePointer<AnyObject?>
    #else
    /// The object buffer of ``NSFastEnumeration`` as this module declares it.
    public typealias FastEnumerationBuffer = UnsafeMutablePointer<AnyObject?>
    #endif

    /// Hands out up to `len` samples after the ones already enumerated (`state.state` counts them).
    open func countByEnumerating(
        with state: UnsafeMutablePointer<NSFastEnumerationState>,
        objects buffer: FastEnumerationBuffer, count len: Int
    ) -> Int {
        let start = Int(state.pointee.state)
        let n = max(0, min(len, samples.count - start))
        for i in 0..<n { buffer[i] = samples[start + i] }
        state.pointee.state = UInt(start + n)
        state.pointee.itemsPtr = buffer
        state.pointee.mutationsPtr = Self.noMutations
        return n
    }

    /// The list never changes: its mutation counter stays 0.
    nonisolated(unsafe) private static let noMutations: UnsafeMutablePointer<UInt> = {
        let p = UnsafeMutablePointer<UInt>.allocate(capacity: 1)
        p.initialize(to: 0)
        return p
    }()

    open override var description: String {
        "CMSensorDataList(\(samples.count) samples)"
    }
}
