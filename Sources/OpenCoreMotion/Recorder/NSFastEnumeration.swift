#if !canImport(ObjectiveC)
// Foundation on Linux has no fast enumeration. These declarations carry just enough of Apple's
// so that code written for Apple platforms, in particular the usual
// `extension CMSensorDataList: Sequence { … NSFastEnumerationIterator(self) … }`, builds unchanged.
// On Apple platforms Foundation's own are used.

/// The state of a fast enumeration between two calls of
/// ``NSFastEnumeration/countByEnumerating(with:objects:count:)``.
public struct NSFastEnumerationState {
    /// The enumerator's position; 0 before the first call.
    public var state: UInt
    /// Where the objects of the last call are.
    public var itemsPtr: UnsafeMutablePointer<AnyObject?>?
    /// Points to a value that changes when the collection is mutated during enumeration.
    public var mutationsPtr: UnsafeMutablePointer<UInt>?
    /// Free for the enumerator's own use.
    public var extra: (UInt, UInt, UInt, UInt, UInt)

    /// A state before the first call: every field zero.
    public init() {
        self.init(state: 0, itemsPtr: nil, mutationsPtr: nil, extra: (0, 0, 0, 0, 0))
    }

    /// A state with every field given.
    public init(
        state: UInt, itemsPtr: UnsafeMutablePointer<AnyObject?>?, mutationsPtr: UnsafeMutablePointer<UInt>?,
        extra: (UInt, UInt, UInt, UInt, UInt)
    ) {
        self.state = state
        self.itemsPtr = itemsPtr
        self.mutationsPtr = mutationsPtr
        self.extra = extra
    }
}

/// A collection that hands out its objects a few at a time (Foundation's fast enumeration).
public protocol NSFastEnumeration {
    /// Returns the next objects: sets `state.itemsPtr` to them (in `buffer` or in the collection's
    /// own storage) and returns how many there are, 0 at the end.
    ///
    /// - Parameters:
    ///   - state: the enumeration state, zero-filled before the first call.
    ///   - buffer: room for `len` objects the callee may use.
    ///   - len: the room in `buffer`.
    func countByEnumerating(with state: UnsafeMutablePointer<NSFastEnumerationState>, objects buffer: UnsafeMutablePointer<AnyObject?>, count len: Int) -> Int
}

/// An iterator over any ``NSFastEnumeration``, as Foundation's: its elements are `Any`.
public struct NSFastEnumerationIterator: IteratorProtocol {
    private let enumerable: any NSFastEnumeration
    private var state = NSFastEnumerationState()
    private var pending: [Any] = []
    private var position = 0
    private var exhausted = false

    /// An iterator over `enumerable`.
    public init(_ enumerable: any NSFastEnumeration) {
        self.enumerable = enumerable
    }

    /// The next object, or `nil` at the end.
    public mutating func next() -> Any? {
        if position < pending.count {
            defer { position += 1 }
            return pending[position]
        }
        guard !exhausted else { return nil }
        refill()
        guard position < pending.count else {
            exhausted = true
            return nil
        }
        defer { position += 1 }
        return pending[position]
    }

    private mutating func refill() {
        let chunk = 16
        var buffer = [AnyObject?](repeating: nil, count: chunk)
        var s = state
        let source = enumerable
        let items: [Any] = buffer.withUnsafeMutableBufferPointer { buf in
            withUnsafeMutablePointer(to: &s) { statePointer in
                let n = source.countByEnumerating(with: statePointer, objects: buf.baseAddress!, count: chunk)
                guard n > 0, let itemsPtr = statePointer.pointee.itemsPtr else { return [] }
                return (0..<n).compactMap { itemsPtr[$0] }
            }
        }
        state = s
        state.itemsPtr = nil
        pending = items
        position = 0
    }
}
#endif
