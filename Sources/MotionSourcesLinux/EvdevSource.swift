import MotionSources
import MotionFusion
import Logging

/// A game controller's motion node (`/dev/input/eventN` with `INPUT_PROP_ACCELEROMETER`) as a source.
///
/// Acceleration in g and rotation rate in rad/s, mapped to Core Motion's axes and sign by the
/// driver's ``EvdevAxisMap``; timestamps from `MSC_TIMESTAMP` (see ``EvdevStream``). The node streams
/// at the controller's own rate, which cannot be set; ``apply(_:sink:)`` returns that rate.
///
/// ## Threading
/// As ``IIOSource``: `apply` from any thread; events on the source's thread, serialised; none after
/// `apply(.none)` returns. An unplugged controller ends the stream with `.failed(.deviceRemoved)`.
package final class EvdevSource: SensorSource, Sendable {
    /// The node's identity.
    package let node: EvdevIdentity
    /// Identifier `evdev:/dev/input/eventN`, name, sensors, details.
    package let info: SourceInfo
    /// The axis map in use.
    package let axisMap: EvdevAxisMap
    /// The controller's native rate in Hz (used for the returned rate).
    package let nativeRate: Double
    let opener: any EvdevOpener
    static let logger = Logger(label: "OpenCoreMotion.evdev")

    /// The running stream: its worker and the open node (closed to wake a blocked read).
    private let running = Locked<(worker: SourceWorker, device: any EvdevDevice)?>(nil)

    /// Creates a source for an identified node.
    ///
    /// - Parameters:
    ///   - node: the node (from ``EvdevDevice/identity()``).
    ///   - opener: opens the node when the source starts.
    ///   - pairedGamepad: the gamepad node with the same `uniq`, shown in the details.
    ///   - override: a matrix replacing the driver's axis map.
    package init(node: EvdevIdentity, opener: any EvdevOpener = POSIXEvdevOpener(), pairedGamepad: String? = nil, override: MountMatrix? = nil) {
        self.node = node
        self.opener = opener
        var map = EvdevAxisMap.forNode(node)
        if let override { map = EvdevAxisMap(driverFamily: "override", matrix: override, negatesAcceleration: map.negatesAcceleration) }
        self.axisMap = map
        switch map.driverFamily {
        case "hid-nintendo": nativeRate = 200
        case "hid-playstation", "hid-steam": nativeRate = 250
        default: nativeRate = 100
        }
        var sensors: [SensorKind: SensorCapability] = [:]
        let ar = node.axes[EvdevCode.ABS_X].map { Double(max($0.resolution, 1)) } ?? 1
        let amax = node.axes[EvdevCode.ABS_X].map { Double($0.maximum) / ar }
        sensors[.accelerometer] = SensorCapability(minimumRate: nativeRate, maximumRate: nativeRate, range: amax, resolution: 1 / ar)
        var details: [(String, String)] = [("node", node.path), ("driver axis map", map.driverFamily)]
        details.append(("accelerometer resolution", "\(formatNumber(ar)) units per g"))
        if node.hasGyro, let g = node.axes[EvdevCode.ABS_RX] {
            let gr = Double(max(g.resolution, 1))
            sensors[.gyro] = SensorCapability(minimumRate: nativeRate, maximumRate: nativeRate, range: Double(g.maximum) / gr * .pi / 180,
                                              resolution: .pi / 180 / gr)
            details.append(("gyro resolution", "\(formatNumber(gr)) units per °/s"))
        }
        details.append(("rate", "\(formatNumber(nativeRate)) Hz (set by the controller)"))
        details.append(("mount matrix", "\(map.matrix)" + (map.negatesAcceleration ? " (acceleration negated: the driver reads +1 g up)" : "")))
        if !node.uniq.isEmpty { details.append(("uniq", node.uniq)) }
        if let pairedGamepad { details.append(("paired gamepad", pairedGamepad)) }
        details.append(("buffered", "yes (evdev events, MSC_TIMESTAMP)"))
        info = SourceInfo(identifier: "evdev:\(node.path)", name: node.name, sensors: sensors, details: details)
    }

    package func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        if let old = running.withLock({ r in defer { r = nil }; return r }) {
            old.worker.requestStop()
            old.device.close()
            old.worker.join()
        }
        let wanted = demand.rates.keys.filter { info.sensors[$0] != nil }
        if demand.isEmpty { return [:] }
        guard !wanted.isEmpty else { throw SourceError(.unavailable, "\(node.name) has no \(demand.rates.keys.map(\.rawValue).sorted().joined(separator: ", "))") }
        let device: any EvdevDevice
        do { device = try opener.open(node.path) } catch {
            throw error.sourceError("cannot open", permissionFix: LinuxIOError.inputPermissionFix)
        }
        var stream = EvdevStream(identity: node, map: axisMap)
        if let v = try? device.axisValues() { stream.resync(v) }
        let keep = Set(wanted)
        let initial = stream
        let worker = SourceWorker(sink: sink)
        let started = worker.spawn(name: "evdev", realtime: true) { worker in
            var stream = initial
            while !worker.isStopping {
                do throws(LinuxIOError) {
                    let events = try device.readEvents(timeout: 0.25)
                    if events.isEmpty { continue }
                    let out = stream.feed(events)
                    if out.needsResync { stream.resync(try device.axisValues()) }
                    worker.deliver(out.samples.lazy.filter { keep.contains($0.sensor) })
                } catch {
                    if worker.isStopping { return }
                    worker.end(.failed(error.sourceError("read failed", gone: "controller disconnected")))
                    return
                }
            }
        }
        guard started else {
            device.close()
            throw SourceError(.io, "cannot start the evdev thread", path: node.path)
        }
        running.withLock { $0 = (worker, device) }
        return Dictionary(uniqueKeysWithValues: wanted.map { ($0, nativeRate) })
    }
}
