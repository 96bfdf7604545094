/// The ``HubAction``s of one step of ``SourceHubState``, in order.
///
/// A sample usually makes one to three actions (one per consumer it reaches). They are kept inline,
/// so routing a sample allocates nothing; a step with more than ``inlineCapacity`` actions (many
/// consumers, or a failure reaching all of them) spills the rest into an array.
struct HubActions: Sequence {
    /// Actions held without allocation.
    static let inlineCapacity = 4

    private var inline = InlineArray<4, HubAction?>(repeating: nil)
    private var overflow: [HubAction] = []
    /// Number of actions held.
    private(set) var count = 0

    /// No actions.
    init() {}

    /// One action.
    init(_ action: HubAction) {
        append(action)
    }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ action: HubAction) {
        if count < Self.inlineCapacity {
            inline[count] = action
        } else {
            overflow.append(action)
        }
        count += 1
    }

    mutating func append(contentsOf other: HubActions) {
        for action in other { append(action) }
    }

    func makeIterator() -> Iterator {
        Iterator(actions: self)
    }

    struct Iterator: IteratorProtocol {
        fileprivate let actions: HubActions
        private var index = 0

        fileprivate init(actions: HubActions) {
            self.actions = actions
        }

        mutating func next() -> HubAction? {
            guard index < actions.count else { return nil }
            defer { index += 1 }
            return index < HubActions.inlineCapacity ? actions.inline[index] : actions.overflow[index - HubActions.inlineCapacity]
        }
    }
}
