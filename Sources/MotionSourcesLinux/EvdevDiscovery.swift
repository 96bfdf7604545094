import MotionSources

/// Finds evdev motion nodes through sysfs (`<sysfs>/class/input/eventN/device/…`), without opening
/// any node: `properties` holds `INPUT_PROP_ACCELEROMETER`, or udev tagged the node
/// `ID_INPUT_ACCELEROMETER=1`, and `capabilities/abs` has ABS_X/Y/Z.
enum EvdevDiscovery {
    struct Candidate {
        var event: String          // event5
        var name: String
        var uniq: String
        var isMotion: Bool
        var devicePath: String
        var driver: String?
    }

    static func candidates(_ options: LinuxDiscoveryOptions) -> [Candidate] {
        let fs = options.fileSystem
        let base = joinPath(options.sysfsRoot, "class/input")
        guard let names = try? fs.contents(ofDirectory: base) else { return [] }
        return names.filter { $0.hasPrefix("event") }.sorted { IIODiscovery.numericSuffix($0) < IIODiscovery.numericSuffix($1) }.map { ev in
            let dev = joinPath(joinPath(base, ev), "device")
            let props = fs.attribute(joinPath(dev, "properties")).map(bits) ?? []
            let abs = fs.attribute(joinPath(dev, "capabilities/abs")).map(bits) ?? []
            var udevAccel = false
            if let d = fs.attribute(joinPath(joinPath(base, ev), "dev")),
               let text = try? fs.readText(joinPath(options.udevDataRoot, "c" + d)) {
                udevAccel = text.split(separator: "\n").contains("E:ID_INPUT_ACCELEROMETER=1")
            }
            // umockdev (and udev test beds) carry udev's properties in the node's uevent.
            if !udevAccel, let uevent = try? fs.readText(joinPath(joinPath(base, ev), "uevent")) {
                udevAccel = uevent.split(separator: "\n").contains("ID_INPUT_ACCELEROMETER=1")
            }
            let driverLink = fs.canonicalPath(joinPath(dev, "device/driver"))
            let motion = (props.contains(EvdevCode.INPUT_PROP_ACCELEROMETER) || udevAccel) && [0, 1, 2].allSatisfy(abs.contains)
            return Candidate(event: ev, name: fs.attribute(joinPath(dev, "name")) ?? ev, uniq: fs.attribute(joinPath(dev, "uniq")) ?? "",
                             isMotion: motion, devicePath: joinPath(options.devRoot, "input/" + ev),
                             driver: driverLink.flatMap { $0.split(separator: "/").last.map(String.init) })
        }
    }

    /// A sysfs bitmap (`properties`, `capabilities/abs`): hex words, most significant first.
    static func bits(_ text: String) -> Set<Int> {
        var out = Set<Int>()
        let words = text.split(separator: " ").reversed()
        for (w, word) in words.enumerated() {
            guard let v = UInt64(word, radix: 16) else { continue }
            for b in 0..<64 where v & (1 << UInt64(b)) != 0 { out.insert(w * 64 + b) }
        }
        return out
    }

    /// udev's `ACCEL_MOUNT_MATRIX` for an input accelerometer: from udev's database, else from the
    /// hwdb with the keys `60-sensor.rules` builds for input devices
    /// (`sensor:modalias:acpi:<hid>:<dmi>` or `sensor:modalias:platform:<name>:<dmi>`).
    static func udevMatrix(event: String, options: LinuxDiscoveryOptions) -> MountMatrix? {
        let fs = options.fileSystem
        let node = joinPath(options.sysfsRoot, "class/input/" + event)
        if let d = fs.attribute(joinPath(node, "dev")), let text = try? fs.readText(joinPath(options.udevDataRoot, "c" + d)) {
            for line in text.split(separator: "\n") where line.hasPrefix("E:ACCEL_MOUNT_MATRIX=") {
                if let m = valid(String(line.dropFirst("E:ACCEL_MOUNT_MATRIX=".count)), "udev ACCEL_MOUNT_MATRIX", event) { return m }
            }
        }
        // The input device's parent (…/eventN/device/device) is the ACPI or platform device.
        guard let parent = fs.canonicalPath(joinPath(node, "device/device")) else { return nil }
        let subsystem = fs.canonicalPath(joinPath(parent, "subsystem")).flatMap { $0.split(separator: "/").last.map(String.init) }
        let name = parent.split(separator: "/").last.map(String.init) ?? ""
        let modalias: String
        switch subsystem {
        case "acpi":
            guard let hid = fs.attribute(joinPath(parent, "hid")) else { return nil }
            modalias = "acpi:" + hid
        case "platform":
            modalias = "platform:" + name
        default:
            return nil
        }
        let dmi = fs.attribute(joinPath(options.sysfsRoot, "class/dmi/id/modalias")) ?? ""
        let hwdb = options.hwdb ?? SensorHwdb.load(directories: options.hwdbDirectories, fileSystem: fs)
        return hwdb.properties(forKey: "sensor:modalias:\(modalias):\(dmi)")["ACCEL_MOUNT_MATRIX"].flatMap { valid($0, "hwdb ACCEL_MOUNT_MATRIX", event) }
    }

    /// The matrix `text` stands for when it is valid (``MountMatrix/resolving(_:)``), else `nil`
    /// after a warning, so that the next source of the matrix is used.
    static func valid(_ text: String, _ source: String, _ event: String) -> MountMatrix? {
        switch MountMatrix.resolving(text) {
        case .success(let m): return m
        case .failure(let why):
            IIODiscovery.logger.warning("\(event): \(source) '\(SysfsValue.trimmed(text))' refused (\(why)); using the next source")
            return nil
        }
    }

    static func reports(_ options: LinuxDiscoveryOptions) -> [LinuxDeviceReport] {
        let all = candidates(options)
        let fs = options.fileSystem
        let opener = options.evdevOpener
        return all.filter(\.isMotion).map { c in
            let paired = all.first { !$0.isMotion && !c.uniq.isEmpty && $0.uniq == c.uniq }.map { "\($0.devicePath) (\($0.name))" }
            let id = "evdev:\(c.devicePath)"
            guard fs.fileExists(c.devicePath) || options.evdevOpener != nil else {
                return LinuxDeviceReport(identifier: id, name: c.name, backend: "evdev", status: .unsupported,
                                         problem: SourceError(.unavailable, "no device node", path: c.devicePath), source: nil, details: [])
            }
            do throws(LinuxIOError) {
                let device = try (opener ?? POSIXEvdevOpener()).open(c.devicePath)
                defer { device.close() }
                var identity = try device.identity()
                identity.path = c.devicePath
                identity.driver = c.driver
                if identity.name.isEmpty { identity.name = c.name }
                if identity.uniq.isEmpty { identity.uniq = c.uniq }
                if identity.vendor == 0, let v = fs.attribute(joinPath(options.sysfsRoot, "class/input/\(c.event)/device/id/vendor")) {
                    identity.vendor = UInt16(v, radix: 16) ?? 0
                }
                // Nodes tagged by udev only (uinput test devices) count as motion nodes too.
                identity.properties.insert(EvdevCode.INPUT_PROP_ACCELEROMETER)
                var override = options.mountMatrixOverrides[c.devicePath] ?? options.mountMatrixOverrides[c.name]
                // Laptop accelerometers (not controllers): udev's ACCEL_MOUNT_MATRIX applies, as for IIO.
                if override == nil, !EvdevAxisMap.forNode(identity).negatesAcceleration {
                    override = udevMatrix(event: c.event, options: options)
                }
                let s = EvdevSource(node: identity, opener: opener ?? POSIXEvdevOpener(), pairedGamepad: paired, override: override)
                return LinuxDeviceReport(identifier: id, name: c.name, backend: "evdev", status: .usable, problem: nil, source: s, details: s.info.details)
            } catch {
                return LinuxDeviceReport(identifier: id, name: c.name, backend: "evdev", status: error.isPermissionDenied ? .permissionDenied : .unsupported,
                                         problem: error.sourceError("cannot open", permissionFix: LinuxIOError.inputPermissionFix), source: nil, details: [])
            }
        }
    }
}
