/// A source's sink held as a value: what a source keeps in its locked state and takes out per event.
///
/// A bare closure returned out of a generic `withLock` is reabstracted on the way, which allocates on
/// every call, so once per sample on a source's hot path. Wrapped in this struct it passes through
/// the lock's generic signature as it is.
package struct SourceSink: Sendable {
    /// The sink.
    package let call: @Sendable (SourceEvent) -> Void

    /// Wraps `sink`.
    package init(_ sink: @escaping @Sendable (SourceEvent) -> Void) {
        call = sink
    }
}
