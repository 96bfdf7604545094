import MotionSources

/// What discovery found for one device: a usable source, or why the device cannot be used.
package struct LinuxDeviceReport: Sendable {
    /// Whether the device can be used.
    package enum Status: Sendable, Hashable {
        /// ``LinuxDeviceReport/source`` is set and can be started.
        case usable
        /// This process may not read the device; ``LinuxDeviceReport/problem`` names the file and the fix.
        case permissionDenied
        /// Values did not parse, so the device was skipped; ``LinuxDeviceReport/problem`` says which.
        case malformed
        /// The device is not a motion sensor this library can use.
        case unsupported
    }

    /// `iio:iio:device2` or `evdev:/dev/input/event5`: what `--source` accepts.
    package var identifier: String
    /// A human-readable name.
    package var name: String
    /// `iio` or `evdev`.
    package var backend: String
    /// Usable or not.
    package var status: Status
    /// Why the device is not usable, or a warning (buffered access refused), when there is one.
    package var problem: SourceError?
    /// The source, when ``status`` is ``Status/usable``.
    package var source: (any SensorSource)?
    /// Ordered (label, value) pairs for `coremotion sensors`: channels, scale, rates available and
    /// current, mount matrix and its origin, buffered access.
    package var details: [(String, String)]

    /// ``details`` preceded by the status line; what `coremotion sensors` prints.
    package var description: [(String, String)] {
        var out: [(String, String)] = [("source", identifier), ("name", name)]
        switch status {
        case .usable: out.append(("status", problem.map { "usable (\($0.description))" } ?? "usable"))
        case .permissionDenied: out.append(("status", "permission denied: \(problem?.description ?? "")"))
        case .malformed: out.append(("status", "skipped: \(problem?.description ?? "")"))
        case .unsupported: out.append(("status", "unsupported: \(problem?.description ?? "")"))
        }
        return out + details
    }
}

/// Finds the motion sensors of a Linux machine (IIO and evdev) and builds sources for them.
///
/// All entry points read sysfs and `/dev` under the given roots (tests and `--sysfs-root` /
/// `--dev-root` point them elsewhere). They may be called from any thread; they do blocking file I/O.
package enum LinuxSensorDiscovery {
    /// Every motion device found under the roots: IIO devices grouped by board (parent device and
    /// label), then evdev motion nodes. Devices whose values do not parse are reported
    /// ``LinuxDeviceReport/Status/malformed`` (and logged); unreadable ones
    /// ``LinuxDeviceReport/Status/permissionDenied`` with the fix.
    ///
    /// - Parameters:
    ///   - sysfsRoot: the sysfs root; `nil` (the default) uses `COREMOTION_SYSFS_ROOT`, else `/sys`.
    ///   - devRoot: the device root; `nil` (the default) uses `COREMOTION_DEV_ROOT`, else `/dev`.
    package static func discover(sysfsRoot: String? = nil, devRoot: String? = nil) -> [LinuxDeviceReport] {
        discover(options: LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot))
    }

    /// ``discover(sysfsRoot:devRoot:)`` with full options (file system twin, hwdb, overrides).
    ///
    /// On the real file system, a device whose source is still alive in this process is reported
    /// with that same source object, so two managers asking for one device share its stream.
    package static func discover(options: LinuxDiscoveryOptions) -> [LinuxDeviceReport] {
        var reports: [LinuxDeviceReport] = []
        var usable: [IIODeviceDescription] = []
        for outcome in IIODiscovery.scan(options) {
            switch outcome {
            case .device(let d): usable.append(d)
            case .notMotion: continue
            case .skipped(let id, let name, let error):
                reports.append(LinuxDeviceReport(identifier: "iio:\(id)", name: name, backend: "iio",
                                                 status: error.kind == .permissionDenied ? .permissionDenied : .malformed,
                                                 problem: error, source: nil, details: []))
            }
        }
        // Display sensors (and those of unknown place) before base ones: orientation is the screen's.
        let ordered = groupIIO(usable).enumerated().sorted { a, b in
            let ab = a.element.contains { $0.location == "base" }, bb = b.element.contains { $0.location == "base" }
            return ab != bb ? !ab : a.offset < b.offset
        }.map(\.element)
        for group in ordered {
            let source = IIOSource(devices: group, options: options)
            var problem: SourceError?
            for d in group {
                if case .permissionDenied(let why) = d.bufferAccess {
                    problem = SourceError(.permissionDenied, "buffer not accessible, will poll sysfs: \(why)", path: d.devicePath)
                }
            }
            var details = source.info.details
            if let loc = group.compactMap(\.location).first { details.insert(("location", loc), at: 0) }
            reports.append(LinuxDeviceReport(identifier: source.info.identifier, name: source.info.name, backend: "iio",
                                             status: .usable, problem: problem, source: source, details: details))
        }
        reports += EvdevDiscovery.reports(options)
        // On the real file system, a device already open in this process keeps its source object,
        // so every manager asking for it shares one stream (the hub is per source object).
        // Sources on another clock (a test's ManualClock) are never shared with the real ones.
        if options.fileSystem is POSIXFileSystem, options.clock === MonotonicSourceClock.shared {
            for i in reports.indices {
                guard let s = reports[i].source else { continue }
                reports[i].source = SourceRegistry.shared.canonical(s, key: "\(options.sysfsRoot)|\(options.devRoot)|\(s.info.identifier)")
            }
        }
        return reports
    }

    /// The source for a `--source` / `COREMOTION_SOURCE` spec:
    /// - `iio`: the first usable IIO motion device;
    /// - `iio:NAME`: the IIO motion device with a member whose id (`iio:device2`), `name` or `label` is NAME;
    /// - `evdev`: the first evdev motion node;
    /// - `evdev:/dev/input/eventN` (or `evdev:eventN`, or the node's name): that node;
    /// - `i2c`, `i2c:/dev/i2c-N`, `i2c:/dev/i2c-N:0xAA`: an MPU-6050/6500/9250, LSM6DSx, LSM9DS1 or BMI160 driven from user space
    ///   (see ``I2CDiscovery/source(forSpec:options:)``).
    ///
    /// - Throws: ``SourceError`` `.unavailable` when nothing matches (the message lists what exists),
    ///   `.permissionDenied` or `.malformedInput` when the matching device is not usable.
    /// Roots as in ``discover(sysfsRoot:devRoot:)``.
    package static func source(forSpec spec: String, sysfsRoot: String? = nil, devRoot: String? = nil) throws(SourceError) -> any SensorSource {
        try source(forSpec: spec, options: LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot))
    }

    /// ``source(forSpec:sysfsRoot:devRoot:)`` with full options.
    package static func source(forSpec spec: String, options: LinuxDiscoveryOptions) throws(SourceError) -> any SensorSource {
        let backend: String
        var wanted: String?
        if let colon = spec.firstIndex(of: ":") {
            backend = String(spec[..<colon])
            wanted = String(spec[spec.index(after: colon)...])
            if wanted!.isEmpty { wanted = nil }
        } else {
            backend = spec
        }
        if backend == "i2c" { return try I2CDiscovery.source(forSpec: spec, options: options) }
        guard backend == "iio" || backend == "evdev" else {
            throw SourceError(.unavailable, "unknown Linux source '\(spec)': use iio, iio:NAME, evdev, evdev:/dev/input/eventN, i2c or i2c:/dev/i2c-N[:0xAA]")
        }
        let reports = discover(options: options).filter { $0.backend == backend }
        let matching = reports.filter { r in
            guard let w = wanted else { return true }
            return matches(r, w, options: options)
        }
        if let r = matching.first(where: { $0.status == .usable }), let s = r.source { return s }
        if let r = matching.first, let p = r.problem { throw p }
        let known = reports.map(\.identifier).joined(separator: ", ")
        throw SourceError(.unavailable, "no \(backend) motion device\(wanted.map { " matching '\($0)'" } ?? "") under \(backend == "iio" ? options.sysfsRoot : options.devRoot)"
                          + (known.isEmpty ? "" : "; found: \(known)"))
    }

    /// The first usable source: IIO first (laptops, tablets, phones), then evdev; `nil` when none.
    /// Roots as in ``discover(sysfsRoot:devRoot:)``.
    package static func firstAvailable(sysfsRoot: String? = nil, devRoot: String? = nil) -> (any SensorSource)? {
        firstAvailable(options: LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: sysfsRoot, devRoot: devRoot))
    }

    /// ``firstAvailable(sysfsRoot:devRoot:)`` with full options.
    package static func firstAvailable(options: LinuxDiscoveryOptions) -> (any SensorSource)? {
        let reports = discover(options: options).filter { $0.status == .usable }
        return (reports.first { $0.backend == "iio" && $0.source?.info.sensors[.accelerometer] != nil } ?? reports.first)?.source
    }

    static func matches(_ r: LinuxDeviceReport, _ w: String, options: LinuxDiscoveryOptions) -> Bool {
        if r.identifier == "\(r.backend):\(w)" || r.name == w { return true }
        if let s = r.source as? IIOSource {
            return s.devices.contains { $0.id == w || $0.name == w || $0.label == w || "iio:\($0.id)" == w }
        }
        if let e = r.source as? EvdevSource {
            return e.node.path == w || r.identifier == w || e.node.path == joinPath(options.devRoot, w) || e.node.path == joinPath(options.devRoot, "input/" + w) || e.node.name == w
        }
        return r.identifier.hasSuffix(w)
    }

    /// Groups IIO devices of one board: the same parent device (for HID sensor hubs, the hub: the
    /// parent of the `HID-SENSOR-*` platform devices) and the same label location (`display`,
    /// `base`, …), so a 2-in-1's lid and base accelerometers stay apart.
    static func groupIIO(_ devices: [IIODeviceDescription]) -> [[IIODeviceDescription]] {
        func key(_ d: IIODeviceDescription) -> String {
            var parent = d.parentPath ?? d.sysfsPath
            let last = parent.split(separator: "/").last.map(String.init) ?? ""
            if last.hasPrefix("HID-SENSOR-") { parent = LinuxDiscoveryOptions.parent(of: parent) }
            var location = ""
            if let l = d.label, let dash = l.firstIndex(of: "-") { location = String(l[l.index(after: dash)...]) }
            return parent + "#" + location
        }
        var order: [String] = []
        var groups: [String: [IIODeviceDescription]] = [:]
        for d in devices {
            let k = key(d)
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(d)
        }
        // Two accelerometers under one key (no labels) are two motion devices.
        var out: [[IIODeviceDescription]] = []
        for k in order {
            var g = groups[k]!
            while !g.isEmpty {
                var taken: [IIODeviceDescription] = []
                var kinds = Set<SensorKind>()
                g.removeAll { d in
                    let ks = Set(d.sensors.keys)
                    if ks.isDisjoint(with: kinds) { kinds.formUnion(ks); taken.append(d); return true }
                    return false
                }
                taken.sort { ($0.sensors[.accelerometer] == nil ? 1 : 0, IIODiscovery.numericSuffix($0.id)) < ($1.sensors[.accelerometer] == nil ? 1 : 0, IIODiscovery.numericSuffix($1.id)) }
                out.append(taken)
            }
        }
        return out
    }
}

/// Live sources by device, held weakly.
final class SourceRegistry: Sendable {
    static let shared = SourceRegistry()
    private struct Weak: Sendable { weak let source: (any SensorSource)? }
    private let map = Locked<[String: Weak]>([:])

    /// The live source for `key` if there is one, else `fresh` (which becomes the live one).
    func canonical(_ fresh: any SensorSource, key: String) -> any SensorSource {
        map.withLock { map in
            if let live = map[key]?.source { return live }
            map = map.filter { $0.value.source != nil }
            map[key] = Weak(source: fresh)
            return fresh
        }
    }
}

extension SourceProvider {
    /// Linux hardware: `iio`, `iio:NAME`, `evdev`, `evdev:/dev/input/eventN`, `i2c`, `i2c:/dev/i2c-N[:0xAA]`
    /// (``LinuxSensorDiscovery/source(forSpec:options:)``), the first motion device found when none is named
    /// (IIO, then evdev), and IIO pressure sensors as barometers (`iio`, `iio:NAME`; ``LinuxBarometers``).
    /// Roots as ``LinuxDiscoveryOptions/fromEnvironment(sysfsRoot:devRoot:)`` takes them.
    package static let linuxHardware = SourceProvider(
        schemes: SourceSchemes.linuxHardware,
        usage: "iio[:NAME], evdev[:PATH], i2c[:/dev/i2c-N[:0xAA]]",
        makeSource: { spec, roots throws(SourceError) in
            try LinuxSensorDiscovery.source(forSpec: spec, options: .fromEnvironment(sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot))
        },
        makeBarometer: { spec, roots in
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.first == "iio" else { return nil }
            return LinuxBarometers.first(sysfsRoot: LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: roots.sysfsRoot).sysfsRoot,
                                         name: parts.count > 1 ? parts[1] : nil)
        },
        firstSource: { roots in
            LinuxSensorDiscovery.firstAvailable(options: .fromEnvironment(sysfsRoot: roots.sysfsRoot, devRoot: roots.devRoot))
        },
        firstBarometer: { roots in
            LinuxBarometers.first(sysfsRoot: LinuxDiscoveryOptions.fromEnvironment(sysfsRoot: roots.sysfsRoot).sysfsRoot, name: nil)
        }
    )
}
