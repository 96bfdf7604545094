import Dispatch
import Foundation
import MotionFusion
import MotionSources
import Synchronization

/// A real-time source of smooth waves at 100 Hz on all three sensors, for tests that need live data
/// without depending on the simulator's physics.
final class WaveSource: SensorSource {
    let info = SourceInfo(
        identifier: "test:wave", name: "Wave test source",
        sensors: [
            .accelerometer: SensorCapability(minimumRate: 1, maximumRate: 100, range: 8),
            .gyro: SensorCapability(minimumRate: 1, maximumRate: 100, range: 35),
            .magnetometer: SensorCapability(minimumRate: 1, maximumRate: 100, range: 4900),
        ])
    private struct State {
        var demand = SensorDemand.none
        var sink: (@Sendable (SourceEvent) -> Void)?
        var timer: (any DispatchSourceTimer)?
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "wave-source")

    func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let old = state.withLock { s -> (any DispatchSourceTimer)? in
            s.demand = demand
            s.sink = sink
            if demand.isEmpty { defer { s.timer = nil }; return s.timer }
            if s.timer == nil {
                let t = DispatchSource.makeTimerSource(queue: queue)
                t.schedule(deadline: .now(), repeating: .milliseconds(10), leeway: .milliseconds(1))
                t.setEventHandler { [weak self] in self?.tick() }
                s.timer = t
                t.resume()
            }
            return nil
        }
        old?.cancel()
        if old != nil { queue.sync {} }  // no event after apply returns with an empty demand
        var rates: [SensorKind: Double] = [:]
        for (k, r) in demand.rates { rates[k] = info.sensors[k]!.clamp(rate: r) }
        return rates
    }

    private func tick() {
        let (demand, sink) = state.withLock { ($0.demand, $0.sink) }
        guard let sink, !demand.isEmpty else { return }
        let t = ProcessInfo.processInfo.systemUptime
        let w = 2 * Double.pi * 0.5 * t
        for kind in demand.rates.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            let v: Vector3
            switch kind {
            case .accelerometer: v = Vector3(0.3 * sin(w), 0.3 * cos(w), -1 + 0.1 * sin(3 * w))
            case .gyro: v = Vector3(0.8 * cos(w), -0.5 * sin(2 * w), 0.3 * sin(w))
            case .magnetometer: v = Vector3(20 * cos(w / 4), 20 * sin(w / 4), -40)
            }
            sink(.sample(RawSample(sensor: kind, timestamp: t, value: v)))
        }
    }
}
