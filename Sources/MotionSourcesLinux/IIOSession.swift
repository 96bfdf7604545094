#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources
import MotionFusion

func FileHandle_stderr(_ text: String) {
    var t = text
    t.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// One running demand of an ``IIOSource``: its worker threads (one ``SourceWorker``) and the open
/// device handles that a stop closes to wake blocked reads.
final class IIOSession: Sendable {
    private weak let source: IIOSource?
    private let options: LinuxDiscoveryOptions
    private let worker: SourceWorker
    private let handles = Locked<[any LinuxDeviceHandle]>([])

    init(source: IIOSource, sink: @escaping @Sendable (SourceEvent) -> Void) {
        self.source = source
        self.options = source.options
        self.worker = SourceWorker(sink: sink, clock: source.options.clock)
    }

    /// `true` once the session was stopped or failed: no sink call begins afterwards.
    private var isEnded: Bool { worker.isStopping }

    /// Delivers samples in order, unless the session has ended.
    func deliver(_ samples: [RawSample]) {
        worker.deliver(samples)
    }

    /// Ends the session with an error: one `.failed`, then silence; the other workers stop.
    func fail(_ error: SourceError) {
        worker.end(.failed(error))
        closeHandles()
        if let source { source.sessionEnded(self) }
    }

    /// Stops every worker; when called from outside the workers, waits for them.
    func stop() {
        worker.requestStop()
        closeHandles()
        worker.join()
        // No reader is left: give the descriptors back now. The kernel lets one process at a time
        // open an IIO buffer, and a new demand (a rate change, a second consumer) opens it again
        // before this session object goes away; holding the old descriptor until then made that
        // open fail with EBUSY and the stream fall back to polling.
        // (Called on a worker thread, `join` waits for the others; this thread is not reading.)
        let all = handles.withLock { h -> [any LinuxDeviceHandle] in
            defer { h.removeAll() }
            return h
        }
        for h in all { h.release() }
    }

    private func closeHandles() {
        for h in handles.withLock({ $0 }) { h.close() }
    }

    private func spawn(_ name: String, realtime: Bool = false, _ body: @escaping @Sendable () -> Void) {
        if !worker.spawn(name: name, realtime: realtime, { _ in body() }) {
            fail(SourceError(.io, "cannot start the \(name) thread"))
        }
    }

    // MARK: polling

    /// Polls `*_raw` of each (device, sensor) at its rate, paced on and stamped with the options'
    /// clock (``LinuxDiscoveryOptions/clock``).
    func startPolling(kinds: [(IIODeviceDescription, SensorKind)], rates: [SensorKind: Double]) {
        spawn("iio-poll") { [self] in pollLoop(kinds: kinds, rates: rates) }
    }

    func pollLoop(kinds: [(IIODeviceDescription, SensorKind)], rates: [SensorKind: Double]) {
        let fs = options.fileSystem
        let clock = options.clock
        // safe: seconds since boot, finite and far below Int64.max ns
        let nowNs = { Int64((clock.now() * 1e9).rounded()) }
        struct Item { var sensor: IIOSensorChannels; var periodNs: Int64; var nextNs: Int64 }
        let start = nowNs()
        var items = kinds.compactMap { (d, k) -> Item? in
            guard let s = d.sensors[k] else { return nil }
            let rate = min(max(rates[k] ?? 50, 0.1), 1000)
            return Item(sensor: s, periodNs: Int64(1e9 / rate), nextNs: start)  // safe: rate clamped to 0.1…1000 Hz
        }
        var warned = Set<String>()
        var nextScaleCheck = start + 1_000_000_000
        while !isEnded {
            let now = nowNs()
            if now >= nextScaleCheck {
                // Another process may change the range (`in_accel_scale`): follow it, once a second.
                for i in items.indices { Self.refreshScales(&items[i].sensor, fs: fs) }
                nextScaleCheck = now + 1_000_000_000
            }
            var batch: [RawSample] = []
            for i in items.indices where items[i].nextNs <= now {
                var raw: [Double] = []
                for a in items[i].sensor.axes {
                    do throws(LinuxIOError) {
                        let text = try fs.readText(a.valuePath)
                        guard let v = SysfsValue.double(text) else {
                            if warned.insert(a.valuePath).inserted {
                                IIOSource.logger.warning("\(a.valuePath): '\(SysfsValue.trimmed(text))' is not a number; sample skipped")
                            }
                            break
                        }
                        // value = (raw + offset) × scale; processed (_input) values are already SI.
                        raw.append(a.processed ? v : (v + a.offset) * a.scale)
                    } catch {
                        fail(error.sourceError("read failed", gone: "device removed while polling",
                                               permissionFix: LinuxIOError.sysfsPermissionFix))
                        return
                    }
                }
                let t = clock.now()
                items[i].nextNs += items[i].periodNs
                if items[i].nextNs < now { items[i].nextNs = now + items[i].periodNs }
                guard raw.count == 3 else { continue }
                batch.append(RawSample(sensor: items[i].sensor.kind, timestamp: t, value: value(items[i].sensor, raw)))
            }
            if !batch.isEmpty { deliver(batch) }
            let next = items.map(\.nextNs).min() ?? (now + 100_000_000)
            if !worker.sleep(until: Double(next) / 1e9) { return }
        }
    }

    /// Re-reads each axis's scale attribute; a changed, valid one replaces the scale in use, with a
    /// notice in the log. Unreadable or invalid values keep the scale in use (the next read of the
    /// values reports a removed device).
    static func refreshScales(_ sensor: inout IIOSensorChannels, fs: any LinuxFileSystem) {
        var read: [String: Double?] = [:]
        for k in sensor.axes.indices {
            guard let path = sensor.axes[k].scalePath else { continue }
            if read[path] == nil { read[path] = (try? fs.readText(path)).flatMap { SysfsValue.double($0) } }
            guard let v = read[path] ?? nil, v.isFinite, v != 0, v != sensor.axes[k].scale else { continue }
            if k == sensor.axes.firstIndex(where: { $0.scalePath == path }) {
                IIOSource.logger.notice("\(path) changed from \(formatNumber(sensor.axes[k].scale)) to \(formatNumber(v)) (range changed by another process); following it")
            }
            sensor.axes[k].scale = v
        }
    }

    private func value(_ s: IIOSensorChannels, _ si: [Double]) -> Vector3 {
        s.coreMotionValue(si: Vector3(si[0], si[1], si[2]))
    }

    // MARK: buffered

    /// `COREMOTION_IIO_TRACE=1` prints every buffered-capture action to stderr (debugging aid).
    static let trace: Bool = getenv("COREMOTION_IIO_TRACE").map { String(cString: $0) == "1" } ?? false

    /// Runs ``IIOBufferedCapture`` for one device on its own thread; falls back to polling when
    /// the buffer cannot be set up.
    func startBuffered(device: IIODeviceDescription, kinds: Set<SensorKind>, rate: Double, rates: [SensorKind: Double]) {
        let fs = options.fileSystem
        // Every other scan element is switched off so the layout is known.
        let se = joinPath(device.sysfsPath, "scan_elements")
        let mine = Set(kinds.flatMap { device.sensors[$0]?.axes.compactMap(\.enablePath) ?? [] } + [device.timestampScan?.enablePath].compactMap { $0 })
        let others = ((try? fs.contents(ofDirectory: se)) ?? []).filter { $0.hasSuffix("_en") }.map { joinPath(se, $0) }.filter { !mine.contains($0) }.sorted()
        let trigger = Self.pickTrigger(device: device, options: options, rate: rate)
        let triggerPath = joinPath(device.sysfsPath, "trigger/current_trigger")
        if trigger == nil, fs.fileExists(triggerPath), (fs.attribute(triggerPath) ?? "").isEmpty {
            // A triggered buffer with no trigger to attach (a driver without an interrupt line registers
            // none, and no hrtimer trigger could be made) would never fill: poll from the start.
            let reason = "no trigger for its buffer (the driver registered none and no hrtimer trigger could be created)"
            IIOSource.logger.notice("\(device.id): \(reason); polling sysfs instead")
            source?.noteFallBack(kinds, reason: reason)
            spawn("iio-poll") { [self] in pollLoop(kinds: kinds.sorted { $0.rawValue < $1.rawValue }.map { (device, $0) }, rates: rates) }
            return
        }
        let clockPath = joinPath(device.sysfsPath, "current_timestamp_clock")
        let initial = IIOBufferedCapture(device: device, kinds: kinds, otherEnablePaths: others, triggerName: trigger,
                                         clockWritable: fs.isWritable(clockPath), rate: rate)
        spawn("iio-buffer", realtime: true) { [self] in
            var machine = initial
            var handle: (any LinuxDeviceHandle)?
            var queue = machine.start()
            var nextScaleCheck = LinuxClock.monotonicNs() + 1_000_000_000
            while !queue.isEmpty {
                let action = queue.removeFirst()
                if isEnded {
                    // Finish what stopping asks for (close, disable the buffer), nothing else.
                    handle?.close()
                    for a in [action] + queue + machine.stop() {
                        if case .write(let p, let v) = a, p.hasSuffix("/enable"), v == "0" { try? fs.writeText(p, v) }
                    }
                    return
                }
                if Self.trace {
                    let text: String
                    switch action {
                    case .deliver(let samples): text = "deliver \(samples.count) [\(samples.first.map { String($0.timestamp) } ?? "")…]"
                    case .read(let n, let t): text = "read \(n) timeout \(t)"
                    default: text = "\(action)"
                    }
                    FileHandle_stderr("coremotion iio trace \(LinuxClock.monotonic()): \(text)\n")
                }
                switch action {
                case .write(let p, let v):
                    // Read before the write: a kernel may stamp its first scans while the enable
                    // write is still in progress, and this thread may be preempted after it returns;
                    // the time it was issued is the one no fresh scan can precede.
                    let issued = LinuxClock.monotonicNs()
                    do throws(LinuxIOError) {
                        try fs.writeText(p, v)
                        queue += machine.writeSucceeded(p, issuedAt: issued)
                    } catch { queue += machine.writeFailed(p, error) }
                case .openDevice(let p):
                    do throws(LinuxIOError) {
                        let h = try fs.openDevice(p)
                        handle = h
                        handles.withLock { $0.append(h) }
                        if isEnded { h.close() }
                        queue += machine.deviceOpened()
                    } catch { queue += machine.deviceOpenFailed(error) }
                case .read(let n, let timeout):
                    guard let h = handle else { return }
                    // Another process may change the range (`in_accel_scale`) while the buffer runs,
                    // as while polling: follow it, once a second. (Scans already queued in the kernel's
                    // buffer when it changed are decoded with the new scale: the scans do not carry it.)
                    let now = LinuxClock.monotonicNs()
                    if now >= nextScaleCheck {
                        machine.updateSensors { Self.refreshScales(&$0, fs: fs) }
                        nextScaleCheck = now + 1_000_000_000
                    }
                    do throws(LinuxIOError) {
                        let bytes = try h.read(maxBytes: n, timeout: timeout)
                        let offset = LinuxClock.offsetToMonotonic(from: machine.timestampClock)
                        queue += machine.bytesRead(bytes, clockOffsetNs: offset, arrival: LinuxClock.monotonic())
                    } catch {
                        if error.code == EBADF /* closed by stop() */ || isEnded { queue += machine.stop(); continue }
                        queue += machine.readFailed(error)
                    }
                case .deliver(let samples):
                    deliver(samples)
                case .closeDevice:
                    // This thread is the handle's only reader: the buffer goes back to the kernel
                    // now (another program, or a later demand, may open it).
                    handle?.release()
                    handle = nil
                case .fallBackToPolling(let reason):
                    IIOSource.logger.notice("\(device.id): \(reason)")
                    source?.noteFallBack(kinds, reason: reason)
                    pollLoop(kinds: kinds.sorted { $0.rawValue < $1.rawValue }.map { (device, $0) }, rates: rates)
                    return
                case .fail(let e):
                    fail(e)
                }
            }
        }
    }

    /// A trigger for `device` when it has a `trigger/current_trigger` that is empty: its own
    /// `<name>-dev<N>` trigger, else one whose name starts with the device name, else any `*-dev<N>`,
    /// else an hrtimer trigger `coremotion-devN` created through configfs
    /// (`<sysfs>/kernel/config/iio/triggers/hrtimer`, when mounted and writable) and set to `rate`.
    static func pickTrigger(device: IIODeviceDescription, options: LinuxDiscoveryOptions, rate: Double) -> String? {
        let fs = options.fileSystem
        let path = joinPath(device.sysfsPath, "trigger/current_trigger")
        guard fs.fileExists(path), (fs.attribute(path) ?? "").isEmpty else { return nil }
        let base = joinPath(options.sysfsRoot, "bus/iio/devices")
        func triggers() -> [(dir: String, name: String)] {
            ((try? fs.contents(ofDirectory: base)) ?? []).filter { $0.hasPrefix("trigger") }.sorted()
                .compactMap { t in fs.attribute(joinPath(joinPath(base, t), "name")).map { (joinPath(base, t), $0) } }
        }
        let names = triggers().map(\.name)
        let n = device.id.dropFirst("iio:device".count)
        if let own = names.first(where: { $0 == "\(device.name)-dev\(n)" }) ?? names.first(where: { $0.hasPrefix(device.name) })
            ?? names.first(where: { $0.hasSuffix("-dev\(n)") }) {
            return own
        }
        // An hrtimer trigger of our own.
        let hrtimer = joinPath(options.sysfsRoot, "kernel/config/iio/triggers/hrtimer")
        let name = "coremotion-dev\(n)"
        guard fs.fileExists(hrtimer) else { return nil }
        if !names.contains(name) {
            do { try fs.makeDirectory(joinPath(hrtimer, name)) } catch {
                IIOSource.logger.info("\(device.id): cannot create hrtimer trigger (\(error.reason)); buffer without trigger")
                return nil
            }
        }
        if let t = triggers().first(where: { $0.name == name }) {
            try? fs.writeText(joinPath(t.dir, "sampling_frequency"), formatHz(rate))
            return name
        }
        return nil
    }
}
