/// Whether a chip's FIFO ever fills: a FIFO whose count stays at zero from the start (register
/// memory such as `i2c-stub`, a clone without one) is given up for direct reads of the data
/// registers after 10 sample periods, at least 50 ms. A FIFO that has delivered once is never given up.
///
/// Used by the FIFO paths of ``LSM6DSDriver`` and ``BMI160Driver`` (``MPUDriver`` has its own, the same rule).
struct ChipFIFOWatch: Sendable, Hashable {
    /// How long an empty FIFO is waited for, s.
    let giveUpAfter: Double
    private var emptySince: Double?
    /// `true` once a sample came through the FIFO.
    private(set) var seenData = false

    /// A watch for a chip sampling at `rate` Hz (positive).
    init(rate: Double) { giveUpAfter = max(0.05, 10 / max(rate, 1)) }

    /// A FIFO count of `samples` whole samples read at `time` (seconds): `true` when the FIFO is to be given up.
    mutating func counted(_ samples: Int, at time: Double) -> Bool {
        if samples > 0 { seenData = true }
        guard !seenData else { return false }
        let since = emptySince ?? time
        emptySince = since
        return time - since >= giveUpAfter
    }
}

/// How often a FIFO is read, Hz, for a chip sampling at `rate` Hz: about every 10 samples, at least
/// 50 times a second and, for a FIFO of `capacity` samples (`nil`: large enough not to matter), at
/// least 4 times per fill; never faster than the samples come.
func chipFIFOPollRate(_ rate: Double, capacity: Int? = nil) -> Double {
    let perFill = capacity.map { 4 * rate / Double(max($0, 1)) } ?? 0
    return min(rate, max(50, rate / 10, perFill))
}
