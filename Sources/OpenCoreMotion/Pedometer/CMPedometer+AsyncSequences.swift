import Foundation

extension CMPedometer {
    /// Live pedometer data as an async sequence (beyond Apple): the records
    /// ``startUpdates(from:withHandler:)`` would deliver.
    ///
    /// ```swift
    /// for try await data in CMPedometer().updates(from: Date()) {
    ///     print(data.numberOfSteps)
    /// }
    /// ```
    ///
    /// Each sequence is its own consumer (it does not replace this pedometer's handler). Records are
    /// buffered without limit. Leaving the loop or cancelling the task stops it.
    ///
    /// - Parameter start: the date the cumulative counts start from (may be in the past: history).
    /// - Returns: a sequence that throws an `NSError` in ``CMErrorDomain`` when step counting is not
    ///   available or the source fails.
    public func updates(from start: Date) -> AsyncThrowingStream<CMPedometerData, any Error> {
        let pedometer = CMPedometer(optionalSource: source, databasePath: databasePath, barometer: barometer)
        pedometer.stepLengthModel = stepLengthModel
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            pedometer.startUpdates(from: start) { data, error in
                // Immutable records the pedometer made for this consumer (see Unchecked.swift).
                if let data {
                    nonisolated(unsafe) let data = data
                    continuation.yield(data)
                } else { continuation.finish(throwing: error) }
            }
            // The pedometer is thread-safe by construction (its state is in a `Locked`).
            let stopping = UncheckedSendable(pedometer)
            continuation.onTermination = { _ in stopping.value.stopUpdates() }
        }
    }

    /// Pause and resume events as an async sequence (beyond Apple); see
    /// ``startEventUpdates(handler:)`` and ``updates(from:)``.
    public func eventUpdates() -> AsyncThrowingStream<CMPedometerEvent, any Error> {
        let pedometer = CMPedometer(optionalSource: source, databasePath: databasePath, barometer: barometer)
        return AsyncThrowingStream(bufferingPolicy: .unbounded) { continuation in
            pedometer.startEventUpdates { event, error in
                // Immutable records the pedometer made for this consumer (see Unchecked.swift).
                if let event {
                    nonisolated(unsafe) let event = event
                    continuation.yield(event)
                } else { continuation.finish(throwing: error) }
            }
            // The pedometer is thread-safe by construction (its state is in a `Locked`).
            let stopping = UncheckedSendable(pedometer)
            continuation.onTermination = { _ in stopping.value.stopEventUpdates() }
        }
    }
}
