import MotionSources
import Logging

/// Reads IIO devices out of sysfs (`<sysfs root>/bus/iio/devices/iio:deviceN`).
package enum IIODiscovery {
    /// The outcome for one IIO device directory.
    package enum Outcome: Sendable {
        /// A device with at least one motion sensor.
        case device(IIODeviceDescription)
        /// A device without accelerometer, gyroscope or magnetometer channels (a light sensor, say).
        case notMotion(id: String, name: String)
        /// A device that was skipped, and why (a value that does not parse, an unreadable attribute).
        case skipped(id: String, name: String, error: SourceError)
    }

    static let logger = Logger(label: "OpenCoreMotion.IIO")

    private static let types: [(SensorKind, String)] = [(.accelerometer, "accel"), (.gyro, "anglvel"), (.magnetometer, "magn")]

    /// Scans every IIO device under the options' sysfs root. Devices that fail to parse are
    /// reported as ``Outcome/skipped(id:name:error:)`` and logged at `debug` only: every caller
    /// shows the outcome itself (`coremotion sensors` lists the device with the problem, and a source
    /// that finds no usable device fails with it), so a warning said the same thing twice.
    package static func scan(_ options: LinuxDiscoveryOptions) -> [Outcome] {
        let fs = options.fileSystem
        let base = joinPath(options.sysfsRoot, "bus/iio/devices")
        guard let names = try? fs.contents(ofDirectory: base) else { return [] }
        let hwdb = options.hwdb ?? SensorHwdb.load(directories: options.hwdbDirectories, fileSystem: fs)
        let dmi = fs.attribute(joinPath(options.sysfsRoot, "class/dmi/id/modalias")) ?? ""
        let ids = names.filter { $0.hasPrefix("iio:device") }.sorted { numericSuffix($0) < numericSuffix($1) }
        return ids.map { id in
            let r = describe(id: id, directory: joinPath(base, id), options: options, hwdb: hwdb, dmiModalias: dmi)
            if case .skipped(let id, let name, let error) = r {
                logger.debug("skipping IIO device \(id) (\(name)): \(error)")
            }
            return r
        }
    }

    /// The first valid matrix of `candidates` (see ``MountMatrix/resolving(_:)``: an empty text is
    /// the identity), else the identity. Each one refused before it is logged at `warning` and
    /// named in the returned source, so that `coremotion sensors` shows it.
    static func chooseMountMatrix(_ candidates: [MountMatrixCandidate], device: String, sensor: String)
        -> (matrix: MountMatrix, source: String, gravityTuned: Bool)
    {
        var refused: [String] = []
        func noted(_ source: String) -> String {
            refused.isEmpty ? source : source + "; refused: " + refused.joined(separator: "; ")
        }
        for c in candidates {
            switch MountMatrix.resolving(c.text) {
            case .success(let m):
                let empty = SysfsValue.trimmed(c.text).isEmpty
                return (m, noted(empty ? c.source + " (empty: identity)" : c.source), c.gravityTuned)
            case .failure(let why):
                logger.warning("\(device) \(sensor): \(c.source) '\(SysfsValue.trimmed(c.text))' refused (\(why)); using the next source")
                refused.append("\(c.source) '\(SysfsValue.trimmed(c.text))' (\(why))")
            }
        }
        return (.identity, noted("none (identity)"), false)
    }

    /// A mount-matrix text and where it came from. `gravityTuned`: an `ACCEL_MOUNT_MATRIX` from udev or
    /// the hwdb, tuned for iio-sensor-proxy's gravity-vector axes (see ``IIOUnits``), not a rotation.
    struct MountMatrixCandidate {
        var text: String
        var source: String
        var gravityTuned = false
    }

    static func numericSuffix(_ s: String) -> Int {
        Int(s.reversed().prefix(while: { $0.isNumber }).reversed().map(String.init).joined()) ?? Int.max
    }

    /// Describes one device directory.
    package static func describe(id: String, directory dir: String, options: LinuxDiscoveryOptions,
                                hwdb: SensorHwdb, dmiModalias: String) -> Outcome {
        let fs = options.fileSystem
        let name = fs.attribute(joinPath(dir, "name")) ?? id
        let entries: Set<String>
        do { entries = Set(try fs.contents(ofDirectory: dir)) } catch {
            return .skipped(id: id, name: name, error: error.sourceError("cannot list", permissionFix: LinuxIOError.sysfsPermissionFix))
        }
        let scanEntries = Set((try? fs.contents(ofDirectory: joinPath(dir, "scan_elements"))) ?? [])
        let label = fs.attribute(joinPath(dir, "label")).flatMap { $0.isEmpty ? nil : $0 }
        let canonical = fs.canonicalPath(dir) ?? dir
        let parent = LinuxDiscoveryOptions.parent(of: canonical)
        let parentModalias = fs.attribute(joinPath(parent, "modalias"))
        let accelerationSign = IIOAccelerationSign(name: name, parentModalias: parentModalias, canonicalPath: canonical)

        // udev's database and hwdb, for ACCEL_MOUNT_MATRIX.
        // The texts of ACCEL_MOUNT_MATRIX, udev's first: each is checked where the matrix is chosen.
        var udevMatrices: [MountMatrixCandidate] = []
        var location: String?
        if let dev = fs.attribute(joinPath(dir, "dev")), let text = try? fs.readText(joinPath(options.udevDataRoot, "c" + dev)) {
            for line in text.split(separator: "\n") {
                if line.hasPrefix("E:ACCEL_MOUNT_MATRIX=") {
                    udevMatrices.append(MountMatrixCandidate(text: String(line.dropFirst("E:ACCEL_MOUNT_MATRIX=".count)),
                                                             source: "udev ACCEL_MOUNT_MATRIX", gravityTuned: true))
                }
                if line.hasPrefix("E:ACCEL_LOCATION=") { location = String(line.dropFirst("E:ACCEL_LOCATION=".count)) }
            }
        }
        if let pm = parentModalias {
            let key = SensorHwdb.lookupKey(label: label, parentModalias: pm, dmiModalias: dmiModalias)
            let props = hwdb.properties(forKey: key)
            if let text = props["ACCEL_MOUNT_MATRIX"] {
                udevMatrices.append(MountMatrixCandidate(text: text, source: "hwdb ACCEL_MOUNT_MATRIX", gravityTuned: true))
            }
            if location == nil { location = props["ACCEL_LOCATION"] }
        }
        // The label (accel-base, accel-display) says it too.
        if location == nil, let l = label, l.hasPrefix("accel-") { location = String(l.dropFirst("accel-".count)) }
        let override = options.mountMatrixOverrides[id] ?? options.mountMatrixOverrides[name]
            ?? label.flatMap { options.mountMatrixOverrides[$0] }

        var sensors: [SensorKind: IIOSensorChannels] = [:]
        for (kind, type) in types {
            var axes: [IIOAxisChannel] = []
            var present = 0
            for axis in ["x", "y", "z"] {
                let ch = "\(type)_\(axis)"
                let rawName = entries.contains("in_\(ch)_raw") ? "in_\(ch)_raw" : (entries.contains("in_\(ch)_input") ? "in_\(ch)_input" : nil)
                guard let rawName else { continue }
                present += 1
                let processed = rawName.hasSuffix("_input")
                // Read the value once: a device whose values do not parse is skipped.
                let valuePath = joinPath(dir, rawName)
                switch readNumber(fs, valuePath) {
                case .failure(let e): return .skipped(id: id, name: name, error: e)
                case .success: break
                }
                var scale = 1.0, offset = 0.0
                var scaleNote: String?
                var scalePath: String?
                if !processed {
                    for candidate in ["in_\(ch)_scale", "in_\(type)_scale"] where entries.contains(candidate) {
                        switch readNumber(fs, joinPath(dir, candidate)) {
                        case .failure(let e): return .skipped(id: id, name: name, error: e)
                        case .success(let v) where v == 0:
                            // A scale of 0 would zero every reading; iio-sensor-proxy treats it as
                            // missing, and so do we: 1 unit per count (directions, and so the
                            // orientation, stay right; magnitudes are off by the chip's real scale).
                            scaleNote = "\(candidate) is 0: treated as missing (1 per count)"
                            logger.warning("\(id): \(candidate) is 0; treated as missing (1 per count)")
                        case .success(let v): scale = v; scalePath = joinPath(dir, candidate)
                        }
                        break
                    }
                    for candidate in ["in_\(ch)_offset", "in_\(type)_offset"] where entries.contains(candidate) {
                        switch readNumber(fs, joinPath(dir, candidate)) {
                        case .failure(let e): return .skipped(id: id, name: name, error: e)
                        case .success(let v): offset = v
                        }
                        break
                    }
                }
                var channel = IIOAxisChannel(name: ch, valuePath: valuePath, processed: processed, scale: scale, offset: offset)
                channel.scaleNote = scaleNote
                channel.scalePath = scalePath
                if scanEntries.contains("in_\(ch)_type"), scanEntries.contains("in_\(ch)_index") {
                    let se = joinPath(dir, "scan_elements")
                    guard let typeText = fs.attribute(joinPath(se, "in_\(ch)_type")), let t = IIOScanType(parsing: typeText) else {
                        return .skipped(id: id, name: name, error: SourceError(.malformedInput, "scan type does not parse", path: joinPath(se, "in_\(ch)_type")))
                    }
                    guard let idxText = fs.attribute(joinPath(se, "in_\(ch)_index")), let idx = Int(idxText) else {
                        return .skipped(id: id, name: name, error: SourceError(.malformedInput, "scan index is not an integer", path: joinPath(se, "in_\(ch)_index")))
                    }
                    channel.scanIndex = idx
                    channel.scanType = t
                    channel.enablePath = joinPath(se, "in_\(ch)_en")
                }
                axes.append(channel)
            }
            if present == 0 { continue }
            guard present == 3 else {
                return .skipped(id: id, name: name, error: SourceError(.malformedInput, "\(type) has \(present) of 3 axes", path: dir))
            }
            // Mount matrix, the first valid of: override > udev ACCEL_MOUNT_MATRIX > hwdb
            // ACCEL_MOUNT_MATRIX > in_<type>_mount_matrix > in_mount_matrix > mount_matrix >
            // identity (iio-sensor-proxy's order: udev, then sysfs, then identity).
            var candidates: [MountMatrixCandidate] = []
            if let o = override { candidates.append(MountMatrixCandidate(text: o.description, source: "override")) }
            // udev's matrix is for the accelerometer; it also orients the other sensors of the same
            // chip unless they carry a matrix of their own.
            let own = entries.contains("in_\(type)_mount_matrix")
            if kind == .accelerometer || !own { candidates += udevMatrices }
            for attr in ["in_\(type)_mount_matrix", "in_mount_matrix", "mount_matrix"] where entries.contains(attr) {
                candidates.append(MountMatrixCandidate(text: fs.attribute(joinPath(dir, attr)) ?? "", source: attr))
            }
            let (matrix, source, gravityTuned) = chooseMountMatrix(candidates, device: id, sensor: type)
            let frame = IIOUnits.frame(kind: kind, matrix: matrix, gravityTuned: gravityTuned, sign: accelerationSign)

            // Rates.
            var rateAttr: String?
            for a in ["in_\(type)_sampling_frequency", "sampling_frequency"] where entries.contains(a) { rateAttr = joinPath(dir, a); break }
            var available = IIOAvailableRates.unknown
            for a in ["in_\(type)_sampling_frequency_available", "sampling_frequency_available"] where entries.contains(a) {
                guard let text = fs.attribute(joinPath(dir, a)), let r = IIOAvailableRates(parsing: text) else {
                    return .skipped(id: id, name: name, error: SourceError(.malformedInput, "available rates do not parse", path: joinPath(dir, a)))
                }
                available = r
                break
            }
            let current = rateAttr.flatMap { fs.attribute($0) }.flatMap { SysfsValue.double($0) }
            sensors[kind] = IIOSensorChannels(kind: kind, iioType: type, axes: axes, mountMatrix: matrix, mountMatrixSource: source,
                                              frame: frame, accelerationSign: accelerationSign,
                                              availableRates: available, rateAttribute: rateAttr, currentRate: current,
                                              rateWritable: rateAttr.map { fs.isWritable($0) } ?? false)
        }
        if sensors.isEmpty { return .notMotion(id: id, name: name) }

        var timestamp: (Int, IIOScanType, String)?
        if scanEntries.contains("in_timestamp_type"), let tt = fs.attribute(joinPath(dir, "scan_elements/in_timestamp_type")),
           let t = IIOScanType(parsing: tt), let it = fs.attribute(joinPath(dir, "scan_elements/in_timestamp_index")), let i = Int(it) {
            timestamp = (i, t, joinPath(dir, "scan_elements/in_timestamp_en"))
        }
        let devicePath = joinPath(options.devRoot, id)
        let access = bufferAccess(fs: fs, dir: dir, devicePath: devicePath, sensors: sensors, timestamp: timestamp != nil)
        var d = IIODeviceDescription(id: id, sysfsPath: dir, devicePath: devicePath, name: name, label: label, parentPath: parent,
                                     parentModalias: parentModalias, sensors: sensors, timestampScan: nil, bufferAccess: access,
                                     timestampClock: fs.attribute(joinPath(dir, "current_timestamp_clock")), location: location)
        if let timestamp { d.timestampScan = (index: timestamp.0, type: timestamp.1, enablePath: timestamp.2) }
        return .device(d)
    }

    static func bufferAccess(fs: any LinuxFileSystem, dir: String, devicePath: String, sensors: [SensorKind: IIOSensorChannels], timestamp: Bool) -> IIOBufferAccess {
        guard sensors.values.allSatisfy({ $0.axes.allSatisfy { $0.scanType != nil && !$0.processed } }) else {
            return .unsupported("no scan elements for every axis")
        }
        let enable = ["buffer/enable", "buffer0/enable"].map { joinPath(dir, $0) }.first { fs.fileExists($0) }
        guard let enable else { return .unsupported("no buffer/enable attribute") }
        guard fs.fileExists(devicePath) else { return .unsupported("no device node \(devicePath)") }
        guard fs.isReadable(devicePath) else {
            return .permissionDenied("cannot read \(devicePath): add yourself to the group owning it (ls -l \(devicePath)) or install a udev rule such as SUBSYSTEM==\"iio\", GROUP=\"plugdev\", MODE=\"0660\"")
        }
        guard fs.isWritable(enable) else {
            return .permissionDenied("cannot write \(enable): buffer setup needs write access to the IIO sysfs attributes; install a udev rule that sets their group (RUN+=\"/bin/chgrp -R plugdev %S%p\") or run as root")
        }
        return .available
    }

    private static func readNumber(_ fs: any LinuxFileSystem, _ path: String) -> Result<Double, SourceError> {
        do {
            let text = try fs.readText(path)
            guard let v = SysfsValue.double(text) else {
                return .failure(SourceError(.malformedInput, "'\(SysfsValue.trimmed(text))' is not a number", path: path))
            }
            return .success(v)
        } catch {
            return .failure(error.sourceError("cannot read", permissionFix: LinuxIOError.sysfsPermissionFix))
        }
    }
}
