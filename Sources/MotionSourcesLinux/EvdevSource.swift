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
public final class EvdevSource: SensorSource, @unchecked Sendable {
    /// The node's identity.
    public let node: EvdevIdentity
    /// Identifier `evdev:/dev/input/eventN`, name, sensors, details.
    public let info: SourceInfo
    /// The axis map in use.
    public let axisMap: EvdevAxisMap
    /// The controller's native rate in Hz (used for the returned rate).
    public let nativeRate: Double
    let opener: any EvdevOpener
    static let logger = Logger(label: "OpenCoreMotion.evdev")

    private let lock = ConditionLock()
    private var running: (thread: WorkerThread, stop: StopSignal, device: any EvdevDevice, ended: Ended)?

    final class Ended: @unchecked Sendable {
        private let lock = ConditionLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        /// Sets the flag; returns `true` the first time.
        func set() -> Bool { lock.withLock { defer { value = true }; return !value } }
    }

    /// Creates a source for an identified node.
    ///
    /// - Parameters:
    ///   - node: the node (from ``EvdevDevice/identity()``).
    ///   - opener: opens the node when the source starts.
    ///   - pairedGamepad: the gamepad node with the same `uniq`, shown in the details.
    ///   - override: a matrix replacing the driver's axis map.
    public init(node: EvdevIdentity, opener: any EvdevOpener = POSIXEvdevOpener(), pairedGamepad: String? = nil, override: MountMatrix? = nil) {
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

    public func apply(_ demand: SensorDemand, sink: @escaping @Sendable (SourceEvent) -> Void) throws(SourceError) -> [SensorKind: Double] {
        let old = lock.withLock { () -> (thread: WorkerThread, stop: StopSignal, device: any EvdevDevice, ended: Ended)? in
            defer { running = nil }
            return running
        }
        if let old {
            _ = old.ended.set()
            old.stop.signal()
            old.device.close()
            old.thread.join()
        }
        let wanted = demand.rates.keys.filter { info.sensors[$0] != nil }
        if demand.isEmpty { return [:] }
        guard !wanted.isEmpty else { throw SourceError(.unavailable, "\(node.name) has no \(demand.rates.keys.map(\.rawValue).sorted().joined(separator: ", "))") }
        let device: any EvdevDevice
        do { device = try opener.open(node.path) } catch {
            if error.isPermissionDenied {
                throw SourceError(.permissionDenied, "cannot open (\(error.reason)); add yourself to the 'input' group (sudo usermod -aG input $USER) or install a udev rule with TAG+=\"uaccess\" for the controller", path: node.path)
            }
            throw SourceError(error.isDeviceGone || error.code == 2 ? .deviceRemoved : .io, "cannot open: \(error.reason)", path: node.path)
        }
        var stream = EvdevStream(identity: node, map: axisMap)
        if let v = try? device.axisValues() { stream.resync(v) }
        let stop = StopSignal()
        let ended = Ended()
        let keep = Set(wanted)
        let deliverLock = ConditionLock()
        let initial = stream
        let path = node.path
        let thread = WorkerThread(name: "evdev", realtime: true) {
            var stream = initial
            while !stop.isRaised {
                do throws(LinuxIOError) {
                    let events = try device.readEvents(timeout: 0.25)
                    if events.isEmpty { continue }
                    let out = stream.feed(events)
                    if out.needsResync { stream.resync(try device.axisValues()) }
                    deliverLock.withLock {
                        for s in out.samples where keep.contains(s.sensor) {
                            if ended.isSet { return }
                            sink(.sample(s))
                        }
                    }
                } catch {
                    if stop.isRaised || ended.isSet { return }
                    let e = error.isDeviceGone || error.code == 2
                        ? SourceError(.deviceRemoved, "controller disconnected", path: path)
                        : SourceError(.io, "read failed: \(error.reason)", path: path)
                    deliverLock.withLock { if ended.set() { sink(.failed(e)) } }
                    return
                }
            }
        }
        lock.withLock { running = (thread, stop, device, ended) }
        return Dictionary(uniqueKeysWithValues: wanted.map { ($0, nativeRate) })
    }
}
