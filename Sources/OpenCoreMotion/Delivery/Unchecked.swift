// Apple's Core Motion classes are not `Sendable` (their documentation pages list no `Sendable`
// conformance), and an `open` class that declared `@unchecked Sendable` would make every subclass an
// app writes, such as a test mock, warn "must restate inherited '@unchecked Sendable' conformance".
// So the public classes declare no `Sendable`, and the few places where the package itself hands one of
// its objects to another thread say so explicitly with these two wrappers.
//
// They are safe only for objects that are thread-safe by construction: the package's samples (their
// stored state is `let`, never mutated after `init`) and its managers (their mutable state is held in
// a `Locked`). Each use names which of the two it relies on.

/// A value handed between threads that the compiler cannot prove `Sendable`; see the comment above.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A weak reference handed between threads, for a manager that is thread-safe by construction (its
/// mutable state is in a `Locked`) but cannot be declared `Sendable`; see the comment above.
final class UncheckedWeak<Object: AnyObject>: @unchecked Sendable {
    // Sendable: `value` is a `let`-initialised weak reference (reads of a weak reference are atomic
    // in Swift's runtime), and the object it points to is thread-safe by construction.
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
