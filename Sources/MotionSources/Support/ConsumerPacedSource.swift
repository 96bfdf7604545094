/// A source that no clock paces: a simulator or a replay in virtual time makes its samples as fast as it
/// can, so only its consumers can hold it back.
///
/// A consumer that queues samples for a handler (a manager's push updates) checks for this protocol: with
/// a source that ``isPacedByConsumers``, the consumer bounds what it queues, and the source's thread waits
/// inside its sink call while the handler catches up. Without that, a handler slower than the source (any
/// handler, on a loaded machine) makes the queue, and the process's memory, grow without bound while the
/// handler falls ever further behind. Sources paced by a clock (real hardware, real-time simulation) are
/// never held back: there a slow handler only makes samples wait.
///
/// ## Threading
/// ``isPacedByConsumers`` may be read from any thread and does not change for the life of the source.
package protocol ConsumerPacedSource: SensorSource {
    /// Whether the source runs as fast as its consumers take its samples (virtual time), not on a clock.
    var isPacedByConsumers: Bool { get }
}

extension SimulatedDevice: ConsumerPacedSource {
    /// `true` for ``SimulatedDevice/Clock/virtual(startTime:)``.
    package var isPacedByConsumers: Bool { clock != .realTime }
}
