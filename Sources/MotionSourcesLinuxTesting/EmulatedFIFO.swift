/// The FIFO model the chip emulators share: a queue of a fixed number of entries (a byte, a 16-bit
/// word, a 7-byte tagged word) that, when full, overwrites its oldest entry, the behaviour of the
/// MPU family's, the ST chips' and the BMI160's FIFOs in their continuous (stream) modes.
///
/// It keeps what a status register needs: the unread count, an overrun flag (set when an entry is
/// overwritten, cleared when one is read or the FIFO is emptied; a chip whose flag clears otherwise
/// clears it itself) and the entries consumed (read or lost) since it was last emptied.
///
/// ## Threading
/// A value; the emulators keep it under their lock.
package struct EmulatedFIFO<Element: Sendable>: Sendable {
    /// The most unread entries.
    package let capacity: Int
    private var items: [Element] = []
    private var head = 0
    /// `true` once an entry was overwritten, until one is read or the FIFO is emptied.
    package var overrun = false
    /// Entries read or overwritten since the FIFO was last emptied.
    package private(set) var consumed = 0
    /// Times the FIFO overflowed after it had room (a run of overwrites is one).
    package private(set) var overflows = 0

    /// An empty FIFO of `capacity` entries (at least 1).
    package init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// Unread entries.
    package var count: Int { items.count - head }
    /// The oldest unread entry.
    package var first: Element? { head < items.count ? items[head] : nil }

    /// Appends `e`; a full FIFO loses its oldest entry first (and sets ``overrun``). `true` when
    /// an entry was lost.
    @discardableResult
    package mutating func append(_ e: Element) -> Bool {
        var lost = false
        if count >= capacity {
            head += 1
            consumed += 1
            if !overrun { overflows += 1 }
            overrun = true
            lost = true
        }
        items.append(e)
        compact()
        return lost
    }

    /// Removes and returns the oldest entry (clears ``overrun``), `nil` when empty.
    package mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let e = items[head]
        head += 1
        consumed += 1
        overrun = false
        compact()
        return e
    }

    /// Empties the FIFO (a reset, or bypass mode).
    package mutating func empty() {
        items.removeAll()
        head = 0
        consumed = 0
        overrun = false
    }

    private mutating func compact() {
        if head > 4 * capacity + 64 {
            items.removeFirst(head)
            head = 0
        }
    }
}
