import MotionFusion

/// An in-memory source driven by hand: the twin of a real device for tests and examples.
///
/// Nothing runs in the background. ``emit(_:)`` hands a sample straight to the current sink on the
/// calling thread, but only for sensors in the current demand, exactly as a device that is not
/// sampling a sensor delivers nothing for it.
///
/// ```swift
/// let source = ManualSource()
/// let manager = CMMotionManager(source: source)
/// manager.startAccelerometerUpdates()
/// source.emit(RawSample(sensor: .accelerometer, timestamp: 1, value: Vector3(0, 0, -1)))
/// ```
///
/// ## Threading
/// Every member may be called from any thread. Calls to ``emit(_:)`` must not overlap each other:
/// a real source delivers from one thread at a time, and so must its twin.
public final class ManualSource: SensorSource {
    /// What this source claims to carry.
    public let info: SourceInfo

    private struct State {
        var demand = SensorDemand.none
        var sink: SourceSink?
        var appliedDemands: [SensorDemand] = []
    }

    private let state = Locked(State())

    /// Creates a source with the given sensors, each supporting `minimumRate`…`maximumRate` Hz.
    ///
    /// - Parameters:
    ///   - sensors: the sensors it carries; default the three motion sensors.
    ///   - minimumRate: slowest rate in Hz; default 1.
    ///   - maximumRate: fastest rate in Hz; default 1000.
    ///   - identifier: the ``SourceInfo/identifier``; default `manual`.
    public init(
        sensors: Set<SensorKind> = Set(SensorKind.motion),
        minimumRate: Double = 1,
        maximumRate: Double = 1000,
        identifier: String = "manual"
    ) {
        var caps: [SensorKind: SensorCapability] = [:]
        for s in sensors { caps[s] = SensorCapability(minimumRate: minimumRate, maximumRate: maximumRate) }
        info = SourceInfo(identifier: identifier, name: "Manual source", sensors: caps)
    }

    /// Records the demand and sink. Rates are clamped to the capability and returned.
    @discardableResult
    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        var granted: [SensorKind: Double] = [:]
        for (sensor, rate) in demand.rates {
            guard let cap = info.sensors[sensor] else {
                throw SourceError(.unavailable, "\(info.identifier) has no \(sensor.rawValue)")
            }
            granted[sensor] = cap.clamp(rate: rate)
        }
        state.withLock {
            $0.demand = SensorDemand(rates: granted, maximumLatency: demand.maximumLatency)
            $0.sink = demand.isEmpty ? nil : SourceSink(sink)
            $0.appliedDemands.append($0.demand)
        }
        return granted
    }

    /// The demand currently applied (rates already clamped), `.none` when stopped.
    public var demand: SensorDemand { state.withLock { $0.demand } }

    /// Every demand applied so far, oldest first: lets tests check how consumers were merged.
    public var demandHistory: [SensorDemand] { state.withLock { $0.appliedDemands } }

    /// Delivers `sample` to the sink if its sensor is demanded. Returns whether it was delivered.
    @discardableResult
    public func emit(_ sample: RawSample) -> Bool {
        let sink = state.withLock { s -> SourceSink? in
            s.demand.rates[sample.sensor] == nil ? nil : s.sink
        }
        guard let sink else { return false }
        sink.call(.sample(sample))
        return true
    }

    /// Reports a failure to the sink and stops, as a device that is unplugged does.
    public func fail(_ error: SourceError) {
        let sink = state.withLock { s -> SourceSink? in
            defer { s.sink = nil; s.demand = .none }
            return s.sink
        }
        sink?.call(.failed(error))
    }

    /// Reports an interruption to the sink and keeps the demand, as a network source that has heard
    /// nothing for a while does: a later ``emit(_:)`` resumes. Returns whether a sink was running.
    @discardableResult
    public func interrupt(_ error: SourceError) -> Bool {
        guard let sink = state.withLock({ $0.sink }) else { return false }
        sink.call(.interrupted(error))
        return true
    }

    /// Reports the end of the data to the sink and stops.
    public func finish() {
        let sink = state.withLock { s -> SourceSink? in
            defer { s.sink = nil; s.demand = .none }
            return s.sink
        }
        sink?.call(.finished)
    }
}
