import MotionSources

/// The buffered-capture protocol of one IIO device as a pure state machine: each event in returns
/// the actions to perform, and performs none itself. ``IIOSource`` runs the actions against a
/// ``LinuxFileSystem``; tests run them against `InMemoryLinuxFileSystem` (MotionSourcesLinuxTesting) or inspect them directly.
///
/// Start: disable the buffer, ask for monotonic timestamps, enable exactly the wanted scan elements
/// and the timestamp (disabling every other one so the layout is known), attach a trigger, enable
/// the buffer, open the device node, then read. Samples stamped before the enable write was issued
/// are stale (left from an earlier run) and dropped. A write refused for lack of permission, or a busy
/// buffer, ends in ``Action/fallBackToPolling(reason:)``; `ENODEV` anywhere ends in ``Action/fail(_:)``
/// with ``SourceError/Kind/deviceRemoved``. A buffer that stays empty for ``firstScanTimeout`` after it
/// was enabled (a driver without an interrupt line registers no trigger, so nothing ever fills it: seen
/// with `bmi160` and `st_lsm6dsx` on `i2c-stub` in the VM rig) is switched off and handed to polling.
package struct IIOBufferedCapture: Sendable {
    /// What the driver of the machine must do next.
    package enum Action: Sendable, Equatable {
        /// Write `value` to the sysfs attribute `path`; report with ``writeSucceeded(_:issuedAt:)`` or ``writeFailed(_:_:)``.
        case write(path: String, value: String)
        /// Open the device node; report with ``deviceOpened()`` or ``deviceOpenFailed(_:)``.
        case openDevice(path: String)
        /// Read up to `maxBytes` bytes, waiting at most `timeout` seconds; report with ``bytesRead(_:clockOffsetNs:arrival:)`` or ``readFailed(_:)``.
        case read(maxBytes: Int, timeout: Double)
        /// Hand these samples to the sink, in order.
        case deliver([RawSample])
        /// Close the device node.
        case closeDevice
        /// Buffered capture is not possible; poll sysfs instead. The reason names the file and the fix.
        case fallBackToPolling(reason: String)
        /// Stop with this error.
        case fail(SourceError)
    }

    /// Where the machine is.
    package enum State: Sendable, Equatable {
        /// Not started.
        case idle
        /// Writing the sysfs configuration.
        case configuring
        /// Opening the device node.
        case opening
        /// Reading scans.
        case streaming
        /// Stopped, or handed over to polling.
        case stopped
        /// Ended with an error.
        case failed
    }

    /// The current state.
    package private(set) var state: State = .idle
    /// The clock the kernel stamps scans with after configuration (`monotonic`, `realtime`, …).
    package private(set) var timestampClock: String
    /// The decoder for this configuration.
    package private(set) var decoder: IIOScanDecoder

    let device: IIODeviceDescription
    let kinds: Set<SensorKind>
    let otherEnablePaths: [String]
    let triggerName: String?
    let clockWritable: Bool
    let interval: Double
    private var pending: [String: Bool] = [:]   // path → must succeed
    private var enabledAtNs: Int64?
    private var flushing = false
    private var lastDelivered: [SensorKind: Double] = [:]
    private let enablePath: String

    /// How long an enabled buffer may stay empty before capture falls back to polling: 2 s or 20
    /// sampling periods, whichever is longer.
    /// Lets `body` change the channels the scans are decoded with (a new scale read after another
    /// process changed the range); scans decoded from then on use them. No I/O here: the caller reads.
    package mutating func updateSensors(_ body: (inout IIOSensorChannels) -> Void) {
        decoder.updateSensors(body)
    }

    package var firstScanTimeout: Double { max(2, 20 * interval) }

    /// Prepares a capture.
    ///
    /// - Parameters:
    ///   - device: the device.
    ///   - kinds: the sensors to capture (must be on the device).
    ///   - otherEnablePaths: every other `scan_elements/*_en` of the device, to switch off.
    ///   - triggerName: a trigger to attach when `trigger/current_trigger` exists and is empty, or `nil`.
    ///   - clockWritable: whether `current_timestamp_clock` may be written.
    ///   - rate: the chosen sampling rate in Hz (spaces scans that carry no timestamp).
    package init(device: IIODeviceDescription, kinds: Set<SensorKind>, otherEnablePaths: [String],
                triggerName: String?, clockWritable: Bool, rate: Double) {
        self.device = device
        self.kinds = kinds
        self.otherEnablePaths = otherEnablePaths
        self.triggerName = triggerName
        self.clockWritable = clockWritable
        self.interval = rate > 0 ? 1 / rate : 0.01
        self.timestampClock = device.timestampClock ?? "realtime"
        self.decoder = IIOScanDecoder(device: device, kinds: kinds)
        self.enablePath = ["buffer/enable", "buffer0/enable"].map { joinPath(device.sysfsPath, $0) }[0]
    }

    /// Begins configuration.
    package mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        state = .configuring
        var actions: [Action] = []
        func w(_ p: String, _ v: String, must: Bool) { pending[p] = must; actions.append(.write(path: p, value: v)) }
        w(enablePath, "0", must: true)
        if device.timestampClock != nil && clockWritable {
            w(joinPath(device.sysfsPath, "current_timestamp_clock"), "monotonic", must: false)
        }
        for p in otherEnablePaths { w(p, "0", must: false) }
        for kind in SensorKind.allCases where kinds.contains(kind) {
            for a in device.sensors[kind]?.axes ?? [] { if let p = a.enablePath { w(p, "1", must: true) } }
        }
        if let ts = device.timestampScan { w(ts.enablePath, "1", must: false) }
        if let triggerName { w(joinPath(device.sysfsPath, "trigger/current_trigger"), triggerName, must: false) }
        w(enablePath, "1", must: true)
        return actions
    }

    /// A write went through. `issuedAt` is `CLOCK_MONOTONIC` in ns read just before the write was
    /// issued: for the buffer's enable write, the moment no fresh scan can precede (the kernel may stamp
    /// scans while the write is in progress, and the writer may be preempted after it returns, so a
    /// time read afterwards would drop fresh scans as stale).
    package mutating func writeSucceeded(_ path: String, issuedAt: Int64) -> [Action] {
        guard state == .configuring else { return [] }
        pending[path] = nil
        if path.hasSuffix("current_timestamp_clock") { timestampClock = "monotonic" }
        if path == enablePath && pending.isEmpty {
            enabledAtNs = issuedAt
            state = .opening
            return [.openDevice(path: device.devicePath)]
        }
        return []
    }

    /// A write failed.
    package mutating func writeFailed(_ path: String, _ error: LinuxIOError) -> [Action] {
        guard state == .configuring else { return [] }
        let must = pending[path] ?? false
        pending[path] = nil
        if error.isDeviceGone {
            state = .failed
            return [.fail(SourceError(.deviceRemoved, "device removed while configuring its buffer", path: path))]
        }
        if !must {
            if path == enablePath && pending.isEmpty { return [] }
            return []
        }
        state = .stopped
        let fix = error.isPermissionDenied
            ? "no permission to configure the buffer (\(error.reason)); add a udev rule giving your group write access to \(device.sysfsPath)/scan_elements and buffer, or run as root; polling sysfs instead"
            : "buffer setup failed (\(error.reason)); another program (iio-sensor-proxy?) may hold the buffer; polling sysfs instead"
        return [.fallBackToPolling(reason: "\(path): \(fix)")]
    }

    /// The device node is open: start reading.
    package mutating func deviceOpened() -> [Action] {
        guard state == .opening else { return [] }
        state = .streaming
        flushing = true
        // First a read that does not wait: whatever is queued already is checked for staleness.
        return [.read(maxBytes: readSize * 16, timeout: 0)]
    }

    /// Opening the device node failed.
    package mutating func deviceOpenFailed(_ error: LinuxIOError) -> [Action] {
        guard state == .opening else { return [] }
        if error.isDeviceGone {
            state = .failed
            return [.write(path: enablePath, value: "0"),
                    .fail(SourceError(.deviceRemoved, "device removed", path: error.path))]
        }
        state = .stopped
        let fix = error.isPermissionDenied
            ? "cannot open \(error.path) (\(error.reason)); add yourself to the group owning it or install a udev rule (SUBSYSTEM==\"iio\", GROUP=\"plugdev\", MODE=\"0660\"); polling sysfs instead"
            : "cannot open \(error.path) (\(error.reason)); polling sysfs instead"
        return [.write(path: enablePath, value: "0"), .fallBackToPolling(reason: fix)]
    }

    /// Bytes arrived (possibly none, after a timeout).
    ///
    /// - Parameters:
    ///   - clockOffsetNs: ns to add to a kernel timestamp in ``timestampClock`` to get `CLOCK_MONOTONIC`.
    ///   - arrival: monotonic seconds now.
    package mutating func bytesRead(_ bytes: [UInt8], clockOffsetNs: Int64, arrival: Double) -> [Action] {
        guard state == .streaming else { return [] }
        var actions: [Action] = []
        if !bytes.isEmpty {
            var out: [(timestampNs: Int64, sample: RawSample)] = []
            decoder.feed(bytes, clockOffsetNs: clockOffsetNs, arrival: arrival, interval: interval, into: &out)
            // Flush: scans stamped before the buffer was enabled are stale. Those queued before the
            // first read may also carry another clock's stamps (the clock was just switched), so
            // there anything outside [enable, now + 1 s] is stale too.
            let cutoff = enabledAtNs.map { Double($0) / 1e9 - 0.001 } ?? -Double.infinity
            // Later, a stamp more than 10 s ahead of now cannot be right either (another clock's).
            let ceiling = flushing ? arrival + 1 : arrival + 10
            var samples: [RawSample] = []
            samples.reserveCapacity(out.count)
            for o in out where o.sample.timestamp >= cutoff && o.sample.timestamp <= ceiling {
                // The contract is timestamp order per sensor: a scan stamped at or before the
                // previous one (a clock step, a glitch) is dropped, never delivered out of order.
                if let last = lastDelivered[o.sample.sensor], o.sample.timestamp <= last { continue }
                lastDelivered[o.sample.sensor] = o.sample.timestamp
                samples.append(o.sample)
            }
            if !samples.isEmpty { actions.append(.deliver(samples)) }
        }
        if lastDelivered.isEmpty, let enabled = enabledAtNs, arrival - Double(enabled) / 1e9 > firstScanTimeout {
            state = .stopped
            let trigger = triggerName.map { "trigger \($0)" } ?? "no trigger"
            return [.closeDevice, .write(path: enablePath, value: "0"),
                    .fallBackToPolling(reason: "no scan arrived within \(formatNumber(firstScanTimeout)) s of enabling the buffer (\(trigger)); polling sysfs instead")]
        }
        flushing = false
        actions.append(.read(maxBytes: readSize, timeout: readTimeout))
        return actions
    }

    /// A read failed.
    package mutating func readFailed(_ error: LinuxIOError) -> [Action] {
        guard state == .streaming else { return [] }
        state = .failed
        if error.isDeviceGone {
            return [.closeDevice, .fail(SourceError(.deviceRemoved, "device removed while streaming", path: error.path))]
        }
        return [.closeDevice, .write(path: enablePath, value: "0"), .fail(SourceError(.io, "read failed: \(error.reason)", path: error.path))]
    }

    /// Stops: close the node and disable the buffer.
    package mutating func stop() -> [Action] {
        switch state {
        case .streaming, .opening, .configuring:
            state = .stopped
            return [.closeDevice, .write(path: enablePath, value: "0")]
        default:
            state = .stopped
            return []
        }
    }

    var readSize: Int { max(decoder.layout.scanSize, 1) * 64 }
    var readTimeout: Double { 0.25 }
}
