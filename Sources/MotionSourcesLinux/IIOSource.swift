import MotionSources
import MotionFusion
import Logging

/// A motion device made of one or more IIO devices of one board (an accelerometer, a gyroscope and
/// a magnetometer sharing a parent), delivering Core Motion samples.
///
/// Each demanded sensor streams through its device's buffer (`/dev/iio:deviceN`) when that is
/// possible, or else is polled from sysfs (`*_raw`) on a background thread. Rates: the lowest rate
/// the driver offers at or above the demand is written when the attribute is writable, and the
/// rate read back is returned by ``apply(_:sink:)``.
///
/// ## Threading
/// `apply` may be called from any thread, including from inside the sink. Samples are delivered
/// on the source's own threads, serialised (never two sink calls at once). After `apply` returns
/// with an empty demand the sink is not called again.
///
/// ## Faults
/// A device that vanishes (`ENODEV`, its sysfs directory gone) ends the stream with
/// `.failed(SourceError(.deviceRemoved, …))`; samples already delivered stay delivered.
package final class IIOSource: SensorSource, Sendable {
    /// Identifier, name, sensors and the details `coremotion sensors` prints.
    package let info: SourceInfo
    /// The IIO devices making up this motion device.
    package let devices: [IIODeviceDescription]
    let options: LinuxDiscoveryOptions
    static let logger = Logger(label: "OpenCoreMotion.IIO")

    private struct State {
        var session: IIOSession?
        var lastModes: [SensorKind: String] = [:]
    }
    private let state = Locked(State())

    /// Creates a source over `devices` (normally one group from ``LinuxSensorDiscovery``).
    package init(devices: [IIODeviceDescription], options: LinuxDiscoveryOptions) {
        self.devices = devices
        self.options = options
        self.info = Self.makeInfo(devices)
    }

    /// How each sensor ran in the last `apply`: `buffered /dev/iio:device0` or `polling (reason)`.
    package var modes: [SensorKind: String] { state.withLock { $0.lastModes } }

    /// The device carrying `kind`, the first one when several do.
    func device(for kind: SensorKind) -> IIODeviceDescription? { devices.first { $0.sensors[kind] != nil } }

    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let old = state.withLock { s -> IIOSession? in
            defer { s.session = nil }
            return s.session
        }
        old?.stop()
        if demand.isEmpty { return [:] }

        let wanted = demand.rates.filter { device(for: $0.key) != nil }
        guard !wanted.isEmpty else {
            throw SourceError(.unavailable, "\(info.identifier) has none of the requested sensors (\(demand.rates.keys.map(\.rawValue).sorted().joined(separator: ", ")))")
        }
        // Check the devices still exist and are readable before starting anything.
        for kind in wanted.keys {
            let d = device(for: kind)!
            let path = d.sensors[kind]!.axes[0].valuePath
            do { _ = try options.fileSystem.readText(path) } catch {
                throw error.sourceError("cannot read \(path)", gone: "device is gone", permissionFix: LinuxIOError.sysfsPermissionFix)
            }
        }
        let rates = configureRates(wanted)
        let s = IIOSession(source: self, sink: sink)
        var modes: [SensorKind: String] = [:]
        // One worker per device: buffered when possible, otherwise polled.
        var byDevice: [String: [SensorKind]] = [:]
        for kind in wanted.keys { byDevice[device(for: kind)!.id, default: []].append(kind) }
        var starts: [() -> Void] = []
        for (id, kinds) in byDevice.sorted(by: { $0.key < $1.key }) {
            let d = devices.first { $0.id == id }!
            let rate = kinds.compactMap { rates[$0] }.max() ?? 50
            if options.preferBuffered, case .available = d.bufferAccess {
                for k in kinds { modes[k] = "buffered \(d.devicePath)" }
                starts.append { s.startBuffered(device: d, kinds: Set(kinds), rate: rate, rates: rates) }
            } else {
                var why = "buffer not used"
                switch d.bufferAccess {
                case .unsupported(let r): why = r
                case .permissionDenied(let r): why = r
                case .available: why = "polling requested"
                }
                for k in kinds { modes[k] = "polling sysfs (\(why))" }
                starts.append { s.startPolling(kinds: kinds.map { (d, $0) }, rates: rates) }
            }
        }
        // The modes are in place before any worker runs, so a capture that gives up at once (the
        // buffer busy) leaves its "polling" in `modes`, not the plan's "buffered".
        state.withLock {
            $0.session = s
            $0.lastModes = modes
        }
        for start in starts { start() }
        return rates
    }

    /// Picks and sets each sensor's rate; returns the rate really running (read back), in Hz.
    func configureRates(_ wanted: [SensorKind: Double]) -> [SensorKind: Double] {
        let fs = options.fileSystem
        var result: [SensorKind: Double] = [:]
        // Sensors sharing one attribute get the fastest demand among them.
        var byAttribute: [String: Double] = [:]
        for (kind, r) in wanted {
            guard let s = device(for: kind)?.sensors[kind], let attr = s.rateAttribute else { continue }
            let cap = info.sensors[kind]!
            byAttribute[attr] = max(byAttribute[attr] ?? 0, cap.clamp(rate: r))
        }
        for (kind, r) in wanted {
            let s = device(for: kind)!.sensors[kind]!
            let cap = info.sensors[kind]!
            let want = s.rateAttribute.flatMap { byAttribute[$0] } ?? cap.clamp(rate: r)
            guard let attr = s.rateAttribute else { result[kind] = want; continue }
            let choice = s.availableRates.choose(atLeast: want) ?? want
            let current = fs.attribute(attr).flatMap(SysfsValue.double)
            if current == nil || abs(current! - choice) > 1e-6 {
                do { try fs.writeText(attr, formatRate(choice)) } catch {
                    Self.logger.info("\(attr): cannot set \(formatRate(choice)) Hz (\(error.reason)); keeping \(current.map(formatHz) ?? "?") Hz")
                }
            }
            let real = fs.attribute(attr).flatMap(SysfsValue.double) ?? current ?? choice
            result[kind] = real > 0 ? real : choice
        }
        return result
    }

    private func formatRate(_ v: Double) -> String {
        if v == v.rounded() { return String(Int64(v)) }
        return String(v)
    }

    /// A buffered capture of `kinds` gave up and polls sysfs: ``modes`` says so from now on.
    func noteFallBack(_ kinds: Set<SensorKind>, reason: String) {
        var why = reason
        if why.hasSuffix("; polling sysfs instead") { why.removeLast("; polling sysfs instead".count) }
        state.withLock { s in
            for k in kinds { s.lastModes[k] = "polling sysfs (\(why))" }
        }
    }

    func sessionEnded(_ s: IIOSession) {
        state.withLock { if $0.session === s { $0.session = nil } }
    }
}
