import MotionSources

/// What a multi-device source reports to a ``DashboardDevicePicker``.
package enum DashboardDeviceEvent: Sendable, Hashable {
    /// A reading from a device, in Core Motion's units and signs, seconds since boot.
    case sample(device: String, RawSample)
    /// A device was heard for the first time.
    case appeared(String)
    /// A device sent nothing for a while.
    case silent(String)
}

/// One device at a time of a source that carries several (an MQTT broker subscribed with `+` or `#`),
/// as a ``SensorSource`` the dashboard's `CMMotionManager` reads: it lists every device heard, and
/// passes on the samples of the selected one (by default the first heard) until ``select(_:)`` picks
/// another.
///
/// It knows the multi-device source only through two closures, so MotionDashboard does not depend on
/// the MQTT module: `start` begins delivering every device's labelled samples to the handler it is
/// given, `stop` ends that.
///
/// ```swift
/// let broker = try MQTTSensorSource(spec: "mqtt://localhost:1883/fleet/#")
/// let picker = DashboardDevicePicker(info: broker.info, start: { handler in
///     broker.startDevices { event in /* map MQTTDeviceEvent to DashboardDeviceEvent */ }
/// }, stop: { Task { await broker.stopDevices() } })
/// let server = DashboardServer(source: picker)
/// ```
///
/// ## Threading
/// All members may be called from any thread. Events may arrive on any thread, one at a time.
package final class DashboardDevicePicker: SensorSource {
    /// The underlying source's description.
    package let info: SourceInfo

    private let start: @Sendable (@escaping @Sendable (DashboardDeviceEvent) -> Void) -> Void
    private let stop: @Sendable () -> Void

    private struct State {
        var devices: [DashboardDevice] = []
        /// The ids in ``devices``, and those of them that are silent, for the per-sample checks.
        var known: Set<String> = []
        var silent: Set<String> = []
        var selected: String?
        var sink: SourceSink?
        var wanted: Set<SensorKind> = []
        var started = false
        var observer: (@Sendable ([DashboardDevice], String?) -> Void)?
    }

    private let state = Locked(State())

    /// Creates a picker over a multi-device source.
    ///
    /// - Parameters:
    ///   - info: the source's description (its sensors are the ones the picker offers).
    ///   - start: begins delivering every device's events to the handler; called on the first demand.
    ///   - stop: ends that; called when the demand becomes empty. `start` may be called again later.
    package init(
        info: SourceInfo,
        start: @escaping @Sendable (@escaping @Sendable (DashboardDeviceEvent) -> Void) -> Void,
        stop: @escaping @Sendable () -> Void
    ) {
        self.info = info
        self.start = start
        self.stop = stop
    }

    /// The devices heard so far, in the order they appeared.
    package var devices: [DashboardDevice] { state.withLock { $0.devices } }

    /// The device whose samples are passed on, or `nil` before any is heard.
    package var selected: String? { state.withLock { $0.selected } }

    /// Passes on the samples of `device` from now on (it need not have been heard yet).
    package func select(_ device: String) {
        let (observer, devices) = state.withLock { s -> ((@Sendable ([DashboardDevice], String?) -> Void)?, [DashboardDevice]) in
            s.selected = device
            return (s.observer, s.devices)
        }
        observer?(devices, device)
    }

    /// Sets the one observer told of every change of the device list or of the selection.
    package func onChange(_ observer: @escaping @Sendable ([DashboardDevice], String?) -> Void) {
        let (devices, selected) = state.withLock { s in
            s.observer = observer
            return (s.devices, s.selected)
        }
        if !devices.isEmpty { observer(devices, selected) }
    }

    /// Starts the underlying source on the first demand and stops it when the demand is empty.
    @discardableResult
    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let (startNow, stopNow) = state.withLock { s -> (Bool, Bool) in
            s.wanted = Set(demand.rates.keys)
            if demand.isEmpty {
                s.sink = nil
                defer { s.started = false }
                return (false, s.started)
            }
            s.sink = SourceSink(sink)
            defer { s.started = true }
            return (!s.started, false)
        }
        if stopNow { stop() }
        if startNow { start { [weak self] event in self?.receive(event) } }
        var rates: [SensorKind: Double] = [:]
        for (kind, rate) in demand.rates {
            rates[kind] = info.sensors[kind]?.clamp(rate: rate) ?? rate
        }
        return rates
    }

    private func receive(_ event: DashboardDeviceEvent) {
        typealias Observer = @Sendable ([DashboardDevice], String?) -> Void
        var changed: (Observer?, [DashboardDevice], String?)?
        switch event {
        case .sample(let device, let sample):
            let sink = state.withLock { s -> SourceSink? in
                // A device heard again after a silence (or first heard through a sample) is listed.
                if !s.known.contains(device) || s.silent.contains(device) {
                    Self.mark(device, silent: false, in: &s)
                    changed = (s.observer, s.devices, s.selected)
                }
                return s.selected == device && s.wanted.contains(sample.sensor) ? s.sink : nil
            }
            if let (observer, devices, selected) = changed { observer?(devices, selected) }
            sink?.call(.sample(sample))
        case .appeared(let device), .silent(let device):
            let silent: Bool
            if case .silent = event { silent = true } else { silent = false }
            let (observer, devices, selected) = state.withLock { s in
                Self.mark(device, silent: silent, in: &s)
                return (s.observer, s.devices, s.selected)
            }
            observer?(devices, selected)
        }
    }

    private static func mark(_ device: String, silent: Bool, in s: inout State) {
        if s.known.insert(device).inserted {
            s.devices.append(DashboardDevice(id: device, silent: silent))
        } else if let i = s.devices.firstIndex(where: { $0.id == device }) {
            s.devices[i].silent = silent
        }
        if silent { s.silent.insert(device) } else { s.silent.remove(device) }
        if s.selected == nil { s.selected = device }
    }
}
