import MotionSources
import MotionFusion

/// Turns the bytes read from `/dev/iio:deviceN` into samples, for one device and one set of
/// enabled sensors.
///
/// Scans may arrive split across reads; the decoder keeps the incomplete tail until the rest
/// arrives. Values are decoded per ``IIOScanType`` (mask, shift, sign extension), scaled per axis,
/// rotated by the mount matrix and converted to Core Motion units (see ``IIOUnits``).
package struct IIOScanDecoder: Sendable {
    struct Route: Sendable {
        var sensor: IIOSensorChannels
        var slots: [IIOScanLayout.Slot]
    }

    /// Where each channel sits.
    package let layout: IIOScanLayout
    private(set) var routes: [Route]
    let timestampSlot: IIOScanLayout.Slot?
    private var carry: [UInt8] = []

    /// Creates a decoder for `device` with the axes of `kinds` and the timestamp enabled.
    package init(device: IIODeviceDescription, kinds: Set<SensorKind>) {
        var channels: [(name: String, index: Int, type: IIOScanType)] = []
        for kind in SensorKind.allCases where kinds.contains(kind) {
            guard let s = device.sensors[kind] else { continue }
            for a in s.axes { if let i = a.scanIndex, let t = a.scanType { channels.append((a.name, i, t)) } }
        }
        if let ts = device.timestampScan { channels.append(("timestamp", ts.index, ts.type)) }
        let layout = IIOScanLayout(channels: channels)
        self.layout = layout
        self.routes = SensorKind.allCases.compactMap { kind in
            guard kinds.contains(kind), let s = device.sensors[kind] else { return nil }
            let slots = s.axes.compactMap { layout.slot($0.name) }
            return slots.count == 3 ? Route(sensor: s, slots: slots) : nil
        }
        self.timestampSlot = layout.slot("timestamp")
    }

    /// The raw content of one scan: the timestamp in ns (as the kernel wrote it) and each
    /// channel's decoded count, in layout order.
    package func decodeRaw(_ scan: UnsafeRawBufferPointer) -> (timestampNs: Int64?, values: [(channel: String, value: Int64)]) {
        let values = layout.slots.filter { $0.channel != "timestamp" }.map { (channel: $0.channel, value: $0.type.decode(scan, at: $0.offset)) }
        return (timestampSlot.map { $0.type.decode(scan, at: $0.offset) }, values)
    }

    /// Feeds bytes; returns the samples of every complete scan, with the scan's raw timestamp in ns.
    ///
    /// - Parameters:
    ///   - clockOffsetNs: added to the kernel timestamp to get `CLOCK_MONOTONIC` ns (0 when the
    ///     device stamps with the monotonic clock; `monotonic − realtime` when it stamps with realtime).
    ///   - arrival: monotonic seconds now, used when the device has no timestamp channel.
    ///   - interval: the expected seconds between scans, to space scans without timestamps.
    package mutating func feed(_ bytes: [UInt8], clockOffsetNs: Int64, arrival: Double, interval: Double,
                              into out: inout [(timestampNs: Int64, sample: RawSample)]) {
        let size = layout.scanSize
        guard size > 0 else { return }
        var data: [UInt8]
        if carry.isEmpty { data = bytes } else { data = carry + bytes; carry.removeAll(keepingCapacity: true) }
        let count = data.count / size
        if data.count % size != 0 { carry = Array(data[(count * size)...]) }
        data.withUnsafeBytes { all in
            for i in 0..<count {
                let scan = UnsafeRawBufferPointer(rebasing: all[(i * size)..<((i + 1) * size)])
                let rawNs: Int64
                let t: Double
                if let ts = timestampSlot {
                    rawNs = ts.type.decode(scan, at: ts.offset)
                    t = Double(rawNs &+ clockOffsetNs) / 1e9
                } else {
                    t = arrival - Double(count - 1 - i) * interval
                    rawNs = Int64(t * 1e9)  // safe: t is this machine's monotonic time, less whole scan periods
                }
                for r in routes {
                    let v = r.sensor.coreMotionValue(raw: (r.slots[0].type.decode(scan, at: r.slots[0].offset),
                                                           r.slots[1].type.decode(scan, at: r.slots[1].offset),
                                                           r.slots[2].type.decode(scan, at: r.slots[2].offset)))
                    out.append((rawNs, RawSample(sensor: r.sensor.kind, timestamp: t, value: v)))
                }
            }
        }
    }

    /// Forgets a partial scan.
    package mutating func reset() { carry.removeAll() }

    /// Lets `body` change each decoded sensor's channels (a new scale after a range change); the
    /// layout of the scans is unchanged.
    package mutating func updateSensors(_ body: (inout IIOSensorChannels) -> Void) {
        for i in routes.indices { body(&routes[i].sensor) }
    }
}
