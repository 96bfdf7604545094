import MotionSources

extension IIOSource {
    static func makeInfo(_ devices: [IIODeviceDescription]) -> SourceInfo {
        let primary = devices.first { $0.sensors[.accelerometer] != nil } ?? devices[0]
        var sensors: [SensorKind: SensorCapability] = [:]
        var details: [(String, String)] = []
        details.append(("devices", devices.map { "\($0.id) (\($0.name)\($0.label.map { ", " + $0 } ?? ""))" }.joined(separator: ", ")))
        for d in devices {
            for kind in SensorKind.allCases {
                guard let s = d.sensors[kind], sensors[kind] == nil else { continue }
                let bounds = s.availableRates.bounds
                let current = s.currentRate
                let lo = bounds?.min ?? 1
                let hi = bounds?.max ?? max(current ?? 100, 100)
                let unit: String
                switch kind {
                case .accelerometer: unit = "m/s²"
                case .gyro: unit = "rad/s"
                case .magnetometer: unit = "Gauss"
                case .pressure: unit = "kPa"
                }
                let resolution = s.axes.map { abs($0.scale) }.max().map { $0 * s.unitFactor }
                sensors[kind] = SensorCapability(minimumRate: min(lo, hi), maximumRate: hi, range: nil,
                                                 resolution: resolution.flatMap { $0 > 0 ? $0 : nil })
                let k = kind.rawValue
                details.append(("\(k) device", "\(d.id) \(d.name)"))
                details.append(("\(k) channels", s.axes.map { $0.processed ? "in_\($0.name)_input" : "in_\($0.name)_raw" }.joined(separator: ", ")))
                let scales = Set(s.axes.map(\.scale))
                let offsets = Set(s.axes.map(\.offset))
                details.append(("\(k) scale", (scales.count == 1 ? formatNumber(scales.first!) : s.axes.map { formatNumber($0.scale) }.joined(separator: ", ")) + " \(unit) per count"
                                + (offsets == [0] ? "" : ", offset " + s.axes.map { formatNumber($0.offset) }.joined(separator: ", "))
                                + (s.axes.compactMap(\.scaleNote).first.map { " (\($0))" } ?? "")))
                details.append(("\(k) rates available", s.availableRates == .unknown ? "not listed by the driver" : s.availableRates.description + " Hz"))
                details.append(("\(k) rate now", (current.map(formatHz) ?? "unknown") + " Hz"
                                + (s.rateAttribute == nil ? " (no rate attribute)" : s.rateWritable ? " (writable)" : " (read-only)")))
                details.append(("\(k) mount matrix", "\(s.mountMatrix) [\(s.mountMatrixSource)]"))
                if kind == .accelerometer {
                    details.append(("accelerometer sign", s.accelerationSign.rawValue + (s.accelerationSign == .specificForce ? ": negated" : ": kept")
                                    + (s.frame == s.mountMatrix ? "" : "; applied: \(s.frame)")))
                }
            }
            let buffered: String
            switch d.bufferAccess {
            case .available: buffered = "yes, \(d.devicePath)" + (d.timestampClock.map { ", timestamps \($0)" } ?? "")
            case .unsupported(let why): buffered = "no: \(why)"
            case .permissionDenied(let why): buffered = "no (permission): \(why)"
            }
            details.append(("\(d.id) buffered", buffered))
        }
        let others = devices.filter { $0.id != primary.id }.map(\.name)
        let name = others.isEmpty ? primary.name : "\(primary.name) + \(others.joined(separator: " + "))"
        return SourceInfo(identifier: "iio:\(primary.id)", name: name, sensors: sensors, details: details)
    }
}

func formatNumber(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}
