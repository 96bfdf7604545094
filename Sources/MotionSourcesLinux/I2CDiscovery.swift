#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MotionSources

/// What the I2C scan found at one address.
package struct I2CAddressReport: Sendable {
    /// What answered.
    package enum Finding: Sendable, Hashable {
        /// A chip this library recognises (and drives when ``I2CChip/isDriven``).
        case chip(I2CChip)
        /// A chip whose identity registers hold values this library does not know: the first
        /// register read and its value.
        case otherChip(register: UInt8, value: UInt8)
        /// A kernel driver is bound to the address (from sysfs: the driver's and the device's names,
        /// and its IIO devices), or the kernel refused the address with `EBUSY`.
        case boundToKernel(driver: String?, device: String?, iio: [String])
        /// The transfer failed for another reason.
        case error(LinuxIOError)
    }

    /// The 7-bit address.
    package var address: UInt8
    /// What was found.
    package var finding: Finding
    /// The source for a ``Finding/chip(_:)`` of a chip driven from user space.
    package var source: I2CSource?
    /// One line for `coremotion sensors`, such as `0x68 answers WHO_AM_I 0x70: an MPU-6500, no magnetometer`.
    package var message: String
}

/// What the I2C scan found on one bus.
package struct I2CBusReport: Sendable {
    /// `/dev/i2c-1`.
    package var path: String
    /// The adapter's `name` in sysfs (`bcm2835 (i2c@7e804000)`, `SMBus stub driver`), when readable.
    package var adapterName: String?
    /// Why the bus could not be scanned (no permission, open failed), with the fix.
    package var problem: SourceError?
    /// The addresses where something answered or a driver is bound, in address order.
    package var addresses: [I2CAddressReport]
    /// The addresses scanned.
    package var scanned: [UInt8] = I2CDiscovery.candidateAddresses

    /// The lines `coremotion sensors` prints: a title, then one line per finding, or why there is none.
    package var lines: [String] {
        var out = ["i2c:\(path)  I2C bus" + (adapterName.map { " (\($0))" } ?? "")]
        if let problem {
            out.append("  " + problem.message)
        } else if addresses.isEmpty {
            out.append("  " + I2CDiscovery.nothingAnswers(scanned))
        } else {
            out += addresses.map { "  " + $0.message }
        }
        return out
    }
}

/// Finds IMUs (``I2CChip``) on the I2C buses (`/dev/i2c-N`) this process may open, and explains
/// what it finds: a chip and the source that reads it, a chip recognised but not driven from user
/// space (with the kernel driver that does), an address a kernel driver holds (use `iio`), an
/// unknown chip, a bus it may not open (the fix), a bus where nothing answers.
///
/// At each of ``candidateAddresses`` the scan reads the identity registers of the chips that can
/// have that address (``I2CChip/idRegisters(at:)``: `WHO_AM_I` 0x75 then `CHIP_ID` 0x00 at 0x68 and
/// 0x69; `WHO_AM_I` 0x0F at 0x1C, 0x1E, 0x6A and 0x6B), one byte each, until one names a chip; it
/// never touches an address a kernel driver is bound to. Its one write turns an MPU-9250's I2C
/// bypass on to look for the AK8963 behind it (``findMagnetometer(_:for:at:busNumber:options:)``).
///
/// All entry points do blocking I/O and may be called from any thread.
package enum I2CDiscovery {
    /// The addresses scanned, in order: 0x1C and 0x1E (LSM9DS1 magnetometer), 0x28 and 0x29
    /// (BNO055), 0x68 and 0x69 (MPU family, ICM-20948, BMI160), 0x6A and 0x6B (LSM6DSx, LSM9DS1
    /// accelerometer and gyroscope).
    package static let candidateAddresses: [UInt8] = [0x1C, 0x1E, 0x28, 0x29, 0x68, 0x69, 0x6A, 0x6B]

    /// The line for a bus where nothing answers at `addresses`.
    package static func nothingAnswers(_ addresses: [UInt8]) -> String {
        let list = addresses.map(I2CAddress.hex)
        let joined = list.count > 1 ? list.dropLast().joined(separator: ", ") + " or " + list[list.count - 1] : list.joined()
        return "no chip answers at \(joined): check the wiring (SDA, SCL, 3.3 V, GND) and the address pin "
            + "(MPU-6050/6500/9250, ICM-20948 and BMI160 answer at 0x68, or 0x69 with AD0/SDO high; LSM6DSx and the LSM9DS1's accelerometer and gyroscope at 0x6a or 0x6b; the LSM9DS1's magnetometer at 0x1c or 0x1e; a BNO055 at 0x28, or 0x29 with COM3 high)"
    }

    /// What to do when `/dev/i2c-N` cannot be opened.
    package static let permissionFix = "add yourself to the i2c group (sudo usermod -aG i2c $USER, then log in again) or run as root"

    /// The bus nodes under the device root, `i2c-N` in number order.
    package static func busPaths(_ options: LinuxDiscoveryOptions) -> [String] {
        let names = ((try? options.fileSystem.contents(ofDirectory: options.devRoot)) ?? []).compactMap { name -> (Int, String)? in
            guard name.hasPrefix("i2c-"), let n = Int(name.dropFirst(4)), n >= 0 else { return nil }
            return (n, name)
        }
        return names.sorted { $0.0 < $1.0 }.map { joinPath(options.devRoot, $0.1) }
    }

    /// The line `coremotion sensors` prints when there is no bus at all.
    package static func noBusLine(_ options: LinuxDiscoveryOptions) -> String {
        "no I2C bus (\(joinPath(options.devRoot, "i2c-*"))): on a Raspberry Pi enable I2C (raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt) and load i2c-dev"
    }

    /// Scans `buses` (default: every ``busPaths(_:)``) at `addresses` (default ``candidateAddresses``).
    /// `ownAttitude`: the sources made for a BNO055 report its own attitude (`?motion=own`).
    package static func scan(_ options: LinuxDiscoveryOptions, buses: [String]? = nil, addresses: [UInt8] = candidateAddresses, ownAttitude: Bool = false) -> [I2CBusReport] {
        let opener = options.i2cOpener ?? POSIXI2CBusOpener()
        var reports: [I2CBusReport] = []
        for path in buses ?? busPaths(options) {
            let number = path.split(separator: "/").last.map { String($0.dropFirst(4)) } ?? ""
            let adapter = joinPath(options.sysfsRoot, "bus/i2c/devices/i2c-\(number)")
            var report = I2CBusReport(path: path, adapterName: options.fileSystem.attribute(joinPath(adapter, "name")), problem: nil, addresses: [], scanned: addresses)
            let bus: any I2CBus
            do { bus = try opener.open(path) } catch {
                report.problem = error.isPermissionDenied
                    ? SourceError(.permissionDenied, "no permission on \(path): \(permissionFix)", path: path)
                    : error.sourceError("cannot open \(path)")
                reports.append(report)
                continue
            }
            defer { bus.close() }
            // A channel of a multiplexer (an i2c-mux, or inv_mpu6050's own bypass mux) also reaches the
            // chips of its parent bus: those are listed once, under the parent.
            let parent = muxParent(adapter, options).flatMap { p in reports.first { $0.path == joinPath(options.devRoot, "i2c-\(p)") } }
            for a in addresses {
                if let parent, parent.addresses.contains(where: { $0.address == a }) { continue }
                if let r = probe(bus, address: a, busNumber: number, options: options, ownAttitude: ownAttitude) { report.addresses.append(r) }
            }
            if let parent, report.addresses.isEmpty, !parent.addresses.isEmpty { continue }
            reports.append(report)
        }
        return reports
    }

    /// The number of the parent bus of a multiplexer channel's adapter directory (it has a
    /// `mux_device` link; its real path runs through the parent's `i2c-N`), or `nil`.
    static func muxParent(_ adapter: String, _ options: LinuxDiscoveryOptions) -> String? {
        let fs = options.fileSystem
        guard fs.fileExists(joinPath(adapter, "mux_device")), let real = fs.canonicalPath(adapter) else { return nil }
        let parts = real.split(separator: "/").dropLast()
        return parts.last { $0.hasPrefix("i2c-") && Int($0.dropFirst(4)) != nil }.map { String($0.dropFirst(4)) }
    }

    /// What is at `address`: `nil` when nothing answers.
    static func probe(_ bus: any I2CBus, address: UInt8, busNumber: String, options: LinuxDiscoveryOptions, ownAttitude: Bool = false) -> I2CAddressReport? {
        let hex = I2CAddress.hex(address)
        if let bound = kernelBinding(busNumber: busNumber, address: address, options: options) {
            return I2CAddressReport(address: address, finding: bound, source: nil, message: message(hex, bound, address: address))
        }
        var first: (register: UInt8, value: UInt8)?
        for register in I2CChip.idRegisters(at: address) {
            let value: UInt8
            do throws(LinuxIOError) {
                guard let b = try bus.read(address: address, register: register, count: 1).first else { return nil }
                value = b
            } catch {
                // No acknowledge: EREMOTEIO (i2c-bcm2835), ENXIO (most controllers), ENODEV (i2c-stub), ETIMEDOUT.
                if first == nil, error.code == ENXIO || error.code == EREMOTEIO || error.code == ENODEV || error.code == ETIMEDOUT { return nil }
                let finding: I2CAddressReport.Finding = error.code == EBUSY ? .boundToKernel(driver: nil, device: nil, iio: []) : .error(error)
                return I2CAddressReport(address: address, finding: finding, source: nil, message: message(hex, finding, address: address))
            }
            if first == nil { first = (register, value) }
            if let chip = I2CChip(register: register, value: value, address: address) {
                guard chip.isDriven else {
                    return I2CAddressReport(address: address, finding: .chip(chip), source: nil,
                                            message: message(hex, .chip(chip), address: address) + " (\(newDeviceLine(chip, address: address, busNumber: busNumber)))")
                }
                let (magnetometer, said) = findMagnetometer(bus, for: chip, at: address, busNumber: busNumber, options: options)
                let source = makeSource(busPath: bus.path, address: address, chip: chip, options: options, magnetometer: magnetometer,
                                        ownAttitude: ownAttitude)
                return I2CAddressReport(address: address, finding: .chip(chip), source: source,
                                        message: message(hex, .chip(chip), address: address) + said + " (--source \(source.info.identifier))")
            }
        }
        guard let first else { return nil }
        let f = I2CAddressReport.Finding.otherChip(register: first.register, value: first.value)
        return I2CAddressReport(address: address, finding: f, source: nil, message: message(hex, f, address: address))
    }

    /// The magnetometer read with `chip` at `address`, and what to add to its line: an MPU-9250's
    /// AK8963 at 0x0C (the scan's one write: `INT_PIN_CFG` BYPASS_EN on, which a real chip needs
    /// before 0x0C answers and which leaves the chip as the user-space driver sets it), an LSM9DS1's
    /// magnetometer at 0x1C or 0x1E (the one its address pins pair with first).
    static func findMagnetometer(_ bus: any I2CBus, for chip: I2CChip, at address: UInt8, busNumber: String,
                                 options: LinuxDiscoveryOptions) -> (magnetometer: (kind: I2CMagnetometer, address: UInt8)?, said: String) {
        switch chip {
        case .mpu9250, .mpu9255:
            let ak: UInt8 = 0x0C
            if kernelBinding(busNumber: busNumber, address: ak, options: options) != nil {
                return (nil, "; its AK8963 at 0x0c is bound to a kernel driver: the magnetometer through --source iio")
            }
            let config = (try? bus.read(address: address, register: MPURegister.intPinConfig, count: 1).first) ?? 0
            try? bus.write(address: address, register: MPURegister.intPinConfig, value: config | 0x02)
            guard let wia = try? bus.read(address: ak, register: 0x00, count: 1).first else {
                return (nil, "; nothing answers at 0x0c after the I2C bypass: no AK8963 magnetometer (an MPU-6500 sold as an \(chip.displayName)?), accelerometer and gyroscope only")
            }
            guard wia == 0x48 else {
                return (nil, "; 0x0c answers WIA \(I2CAddress.hex(wia)) after the I2C bypass, not an AK8963's 0x48: accelerometer and gyroscope only")
            }
            return ((.ak8963, ak), "; AK8963 at 0x0c after bypass")
        case .lsm9ds1:
            let order: [UInt8] = address == 0x6B ? [0x1E, 0x1C] : [0x1C, 0x1E]
            for m in order where kernelBinding(busNumber: busNumber, address: m, options: options) == nil {
                if let id = try? bus.read(address: m, register: 0x0F, count: 1).first, id == 0x3D {
                    return ((.lsm9ds1, m), "; its magnetometer at \(I2CAddress.hex(m)) is read with them")
                }
            }
            return (nil, "; no LSM9DS1 magnetometer answers at 0x1c or 0x1e")
        default:
            return (nil, "")
        }
    }

    /// The line that binds the kernel's driver to `chip`: `echo lsm9ds1_magn 0x1c > /sys/bus/i2c/devices/i2c-1/new_device`.
    static func newDeviceLine(_ chip: I2CChip, address: UInt8, busNumber: String) -> String {
        "modprobe \(chip.kernelModule); echo \(chip.kernelName) \(I2CAddress.hex(address)) > /sys/bus/i2c/devices/i2c-\(busNumber)/new_device"
    }

    /// What the chips that can have `address` answer, for a chip that is none of them.
    static func expected(at address: UInt8) -> String {
        let here = I2CChip.allCases.filter { $0.addresses.contains(address) }
        let chips = here.isEmpty ? I2CChip.allCases : here
        var parts: [String] = []
        for family in [I2CChip.Family.mpu, .icm20948, .bmi160, .lsm6dsx, .lsm9ds1, .stMagnetometer, .bno055] {
            let members = chips.filter { $0.family == family }
            guard !members.isEmpty else { continue }
            let values = members.map { I2CAddress.hex($0.idValue) }
            let list = values.count > 1 ? values.dropLast().joined(separator: ", ") + " or " + values[values.count - 1] : values.joined()
            let name: String
            switch family {
            case .mpu: name = "an MPU-6050/6500/9250 (they answer \(list))"
            case .bmi160: name = "a BMI160 (its CHIP_ID, 0x00, is \(list))"
            case .lsm6dsx: name = "an LSM6DSx (they answer \(list))"
            case .lsm9ds1: name = "an LSM9DS1 accelerometer and gyroscope (it answers \(list))"
            case .stMagnetometer: name = "an LSM9DS1 magnetometer (it answers \(list))"
            case .icm20948: name = "an ICM-20948 (its WHO_AM_I, 0x00 at bank 0, is \(list))"
            case .bno055: name = "a BNO055 (its CHIP_ID, 0x00, is \(list))"
            }
            parts.append(name)
        }
        return parts.count > 1 ? parts.dropLast().joined(separator: ", ") + " nor " + parts[parts.count - 1] : parts.joined()
    }

    static func message(_ hex: String, _ f: I2CAddressReport.Finding, address: UInt8) -> String {
        switch f {
        case .chip(let c): return "\(hex) answers \(c.identityText): \(c.explanation)"
        case .otherChip(let register, let value):
            let what = register == MPURegister.whoAmI ? "WHO_AM_I \(I2CAddress.hex(value))" : "\(register == 0 ? "CHIP_ID" : "WHO_AM_I") (\(I2CAddress.hex(register))) \(I2CAddress.hex(value))"
            return "\(hex) answers \(what): not \(expected(at: address))"
        case .boundToKernel(let driver, let device, let iio):
            var s = "\(hex) is bound to " + (driver.map { "the kernel driver \($0)" } ?? "a kernel driver")
            if let device { s += " (\(device)" + (iio.isEmpty ? "" : ", " + iio.joined(separator: ", ")) + ")" }
            return s + ": use --source iio"
        case .error(let e): return "\(hex): \(e.reason) (\(e.operation) \(e.path))"
        }
    }

    /// The kernel driver bound to `busNumber-00XX` in sysfs, when there is one.
    static func kernelBinding(busNumber: String, address: UInt8, options: LinuxDiscoveryOptions) -> I2CAddressReport.Finding? {
        let digits = String(address, radix: 16)
        let client = joinPath(options.sysfsRoot, "bus/i2c/devices/\(busNumber)-" + String(repeating: "0", count: 4 - digits.count) + digits)
        let fs = options.fileSystem
        guard fs.fileExists(joinPath(client, "driver")) else { return nil }
        let driver = fs.canonicalPath(joinPath(client, "driver")).flatMap { $0.split(separator: "/").last.map(String.init) }
        let iio = ((try? fs.contents(ofDirectory: client)) ?? []).filter { $0.hasPrefix("iio:device") }.sorted()
        return .boundToKernel(driver: driver, device: fs.attribute(joinPath(client, "name")), iio: iio)
    }

    /// A source with the mount matrix override for it, if any (keys: the identifier, `BUS:ADDR`, or the chip's name).
    static func makeSource(busPath: String, address: UInt8, chip: I2CChip, options: LinuxDiscoveryOptions,
                           magnetometer: (kind: I2CMagnetometer, address: UInt8)? = nil, ownAttitude: Bool = false) -> I2CSource {
        let hex = I2CAddress.hex(address)
        let keys = ["i2c:\(busPath):\(hex)", "\(busPath):\(hex)", chip.rawValue]
        let override = keys.lazy.compactMap { options.mountMatrixOverrides[$0] }.first
        let fresh = I2CSource(busPath: busPath, address: address, chip: chip, opener: options.i2cOpener ?? POSIXI2CBusOpener(),
                              mountMatrix: override ?? .identity, mountMatrixSource: override == nil ? "none (identity)" : "override",
                              magnetometer: magnetometer, ownAttitude: ownAttitude, clock: options.clock)
        let key = "i2c|\(fresh.info.identifier)" + (magnetometer.map { "+\($0.kind.rawValue)@\($0.address)" } ?? "")
            + (fresh.reportsOwnAttitude ? "?motion=own" : "")
        guard options.i2cOpener == nil, options.clock === MonotonicSourceClock.shared, let shared = SourceRegistry.shared.canonical(fresh, key: key) as? I2CSource else {
            return fresh
        }
        return shared
    }

    /// The source for `i2c`, `i2c:/dev/i2c-N` (or `i2c:i2c-N`, `i2c:N`) or `i2c:/dev/i2c-N:0xAA`: the
    /// first chip found, the first on that bus, or the chip at that address.
    ///
    /// - Throws: ``SourceError``: `.permissionDenied` with the fix, `.unavailable` with what was found
    ///   instead (a kernel driver holding the address, another chip, nothing).
    package static func source(forSpec spec: String, options: LinuxDiscoveryOptions) throws(SourceError) -> I2CSource {
        var argument = spec.hasPrefix("i2c:") ? String(spec.dropFirst(4)) : (spec == "i2c" ? "" : spec)
        var ownAttitude = false
        if let q = argument.firstIndex(of: "?") {
            for item in argument[argument.index(after: q)...].split(separator: "&") {
                switch item {
                case "motion=own": ownAttitude = true
                case "motion=fused": ownAttitude = false
                default:
                    throw SourceError(.unavailable, "'\(spec)': unknown option '\(item)'; i2c takes motion=own (a BNO055's own fused attitude as device motion) or motion=fused (the default)")
                }
            }
            argument = String(argument[..<q])
        }
        var address: UInt8?
        if let colon = argument.lastIndex(of: ":") {
            guard let a = I2CAddress.parse(String(argument[argument.index(after: colon)...])) else {
                throw SourceError(.unavailable, "'\(spec)': the address must be hex within 0x03…0x77, as i2c:/dev/i2c-1:0x68")
            }
            address = a
            argument = String(argument[..<colon])
        }
        var buses: [String]?
        if !argument.isEmpty {
            let path = argument.hasPrefix("/") ? argument : joinPath(options.devRoot, Int(argument) != nil ? "i2c-\(argument)" : argument)
            buses = [path]
        }
        let all = scan(options, buses: buses, addresses: address.map { [$0] } ?? candidateAddresses, ownAttitude: ownAttitude)
        // A chip with an accelerometer before a magnetometer alone (0x1c comes first in the scan).
        let found = all.flatMap(\.addresses).compactMap(\.source)
        if let s = found.first(where: { $0.info.sensors[.accelerometer] != nil }) ?? found.first {
            if ownAttitude, s.chip != .bno055 {
                throw SourceError(.unavailable, "'\(spec)': motion=own needs a chip with its own fusion (a BNO055); \(s.info.name) has none")
            }
            return s
        }
        if let p = all.lazy.compactMap(\.problem).first { throw p }
        if all.isEmpty { throw SourceError(.unavailable, noBusLine(options)) }
        let what = all.map { r in r.lines.dropFirst().map { $0.trimmingCharacters(in: " ") }.map { "\(r.path): \($0)" }.joined(separator: "; ") }
        throw SourceError(.unavailable, "no IMU to read from user space: " + what.joined(separator: "; "))
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
