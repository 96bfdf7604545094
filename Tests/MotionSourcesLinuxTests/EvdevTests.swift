import MotionSourcesLinuxTesting
import Testing
import Foundation
import MotionSources
import MotionFusion
@testable import MotionSourcesLinux

@Suite struct EvdevTests {
    @Test func fixtureIdentitiesParse() throws {
        let (jc, events) = try Evtest.joycon()
        #expect(jc.name == "Nintendo Switch Left Joy-Con IMU")
        #expect(jc.vendor == 0x57e && jc.product == 0x2006)
        #expect(jc.isMotionNode && jc.hasGyro)
        #expect(jc.axes[EvdevCode.ABS_X]?.resolution == 4096)
        #expect(jc.axes[EvdevCode.ABS_RX]?.resolution == 14247)
        // Three complete frames; the excerpt stops ("[...]") before the fourth frame's SYN_REPORT.
        #expect(events.filter { $0.type == EvdevCode.EV_SYN }.count == 3)
        #expect(events.count == 23)
        let ds4 = try Evtest.dualshock4()
        #expect(ds4.isMotionNode && ds4.hasGyro)
        #expect(ds4.axes[EvdevCode.ABS_Y]?.value == 7888 && ds4.axes[EvdevCode.ABS_Y]?.resolution == 8192)
        #expect(ds4.axes[EvdevCode.ABS_RX]?.resolution == 1024)
        let ds3 = try Evtest.dualshock3()
        #expect(ds3.isMotionNode && !ds3.hasGyro)
        #expect(ds3.axes[EvdevCode.ABS_Z]?.resolution == 113)
        #expect(EvdevAxisMap.forNode(jc) == .nintendo)
        #expect(EvdevAxisMap.forNode(ds4) == .playstation)
        #expect(EvdevAxisMap.forNode(ds3) == .playstation)
    }

    /// The excerpt's fourth frame lacks its SYN_REPORT ("[...]" follows); one is added with the
    /// frame's own event time.
    static func joyconEvents() throws -> (EvdevIdentity, [InputEvent]) {
        let (id, events) = try Evtest.joycon()
        return (id, events + [InputEvent(time: events.last!.time, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)])
    }

    @Test func joyConStreamGivesTimestampedFramesWithPerAxisState() throws {
        let (id, events) = try Self.joyconEvents()
        var stream = EvdevStream(identity: id)
        let out = stream.feed(events)
        let accel = out.samples.filter { $0.sensor == .accelerometer }
        let gyro = out.samples.filter { $0.sensor == .gyro }
        #expect(accel.count == 4 && gyro.count == 4)
        // MSC_TIMESTAMP, not the event time: 5 ms, 5 ms, then 20 ms, though the first three
        // frames share one HID report (event times 1–2 µs apart).
        let dt = zip(accel.dropFirst(), accel).map { (($0.timestamp - $1.timestamp) * 1e6).rounded() }
        #expect(dt == [5000, 5000, 20000])
        #expect(abs(accel[0].timestamp - 1738461230.860033) < 1e-9)
        // Frame 1: X 289, Y −18 (unchanged since the header), Z 4218 at 4096 per g.
        // hid-nintendo frame X forward, Y left, Z up → Core Motion (Y, −X, −Z) after negation.
        let a0 = accel[0].value
        #expect(abs(a0.x - (-18.0 / 4096)) < 1e-12)
        #expect(abs(a0.y - (-289.0 / 4096)) < 1e-12)
        #expect(abs(a0.z - (-4218.0 / 4096)) < 1e-12)   // lying face up: z ≈ −1 g
        // Frame 3 sends no ABS_X/Z: their previous values (290, 4220) are kept.
        #expect(abs(accel[2].value.y - (-290.0 / 4096)) < 1e-12 && abs(accel[2].value.z - (-4220.0 / 4096)) < 1e-12)
        // Gyro at 14247 units per °/s, to rad/s: (−RY, RX, RZ).
        let rad = Double.pi / 180 / 14247
        #expect(abs(gyro[0].value.x - (-3000 * rad)) < 1e-12)
        #expect(abs(gyro[0].value.y - (-1999 * rad)) < 1e-12)
        #expect(abs(gyro[0].value.z - (-1999 * rad)) < 1e-12)
        // Frame 3 keeps RZ = −999 from frame 2.
        #expect(abs(gyro[2].value.z - (-999 * rad)) < 1e-12)
    }

    @Test func mscTimestampWrapsAt32Bits() throws {
        let (id, _) = try Evtest.joycon()
        var stream = EvdevStream(identity: id)
        var events: [InputEvent] = []
        let start = UInt32.max - 7_000
        for i in 0..<4 {
            let us = start &+ UInt32(i * 5000)
            events += [InputEvent(time: 100 + Double(i) * 0.005, type: EvdevCode.EV_MSC, code: EvdevCode.MSC_TIMESTAMP, value: Int32(bitPattern: us)),
                       InputEvent(time: 100 + Double(i) * 0.005, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: Int32(i)),
                       InputEvent(time: 100 + Double(i) * 0.005, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)]
        }
        let t = stream.feed(events).samples.filter { $0.sensor == .accelerometer }.map(\.timestamp)
        #expect(zip(t.dropFirst(), t).allSatisfy { abs(($0 - $1) - 0.005) < 1e-9 })
    }

    /// Frames 10 ms apart on the device's clock whose delivery lags by 150 ms for a while (the anchor
    /// moves forward to the event time) and then catches up (it moves back): every frame keeps a time
    /// after the one before, so none is dropped downstream as out of order. Before, the frames after the
    /// catch-up were stamped up to 150 ms before the last one.
    @Test func reAnchoringNeverMovesTimeBack() throws {
        let (id, _) = try Evtest.joycon()
        var stream = EvdevStream(identity: id)
        var events: [InputEvent] = []
        for i in 0..<60 {
            let due = 100 + Double(i) * 0.01
            let delivered = (20..<40).contains(i) ? due + 0.15 : due
            events += [InputEvent(time: delivered, type: EvdevCode.EV_MSC, code: EvdevCode.MSC_TIMESTAMP, value: Int32(i * 10_000)),
                       InputEvent(time: delivered, type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: Int32(i)),
                       InputEvent(time: delivered, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)]
        }
        let t = stream.feed(events).samples.filter { $0.sensor == .accelerometer }.map(\.timestamp)
        #expect(t.count == 60)
        #expect(zip(t.dropFirst(), t).allSatisfy { $0 > $1 }, "\(zip(t.dropFirst(), t).map { $0 - $1 }.filter { $0 <= 0 })")
        // Before the lag and after the catch-up the device's clock rules: 10 ms apart.
        #expect(abs((t[10] - t[9]) - 0.01) < 1e-9 && abs((t[59] - t[58]) - 0.01) < 1e-9)
    }

    @Test func synDroppedDiscardsUntilReportAndResyncs() throws {
        let (id, _) = try Evtest.joycon()
        var stream = EvdevStream(identity: id)
        let ev = { (c: UInt16, v: Int32) in InputEvent(time: 1, type: EvdevCode.EV_ABS, code: c, value: v) }
        let syn = InputEvent(time: 1, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)
        let dropped = InputEvent(time: 1, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_DROPPED, value: 0)
        let out = stream.feed([ev(EvdevCode.ABS_Z, 100), syn, dropped, ev(EvdevCode.ABS_Z, 999), syn])
        #expect(out.needsResync)
        #expect(out.samples.filter { $0.sensor == .accelerometer }.count == 1)
        stream.resync([EvdevCode.ABS_Z: 4096])
        let after = stream.feed([ev(EvdevCode.ABS_X, 0), syn]).samples.first { $0.sensor == .accelerometer }!
        #expect(after.value.z == -1)
    }

    @Test func dualShock4AtRestReadsFaceUpInCoreMotionAxes() throws {
        let ds4 = try Evtest.dualshock4()
        let stream = EvdevStream(identity: ds4)
        var s = stream
        let out = s.feed([InputEvent(time: 5, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)])
        // Resting values of the dump: X −24, Y 7888, Z 1537 at 8192 per g; Y is up in the driver frame.
        // Nothing changed and no MSC_TIMESTAMP: no frame.
        #expect(out.samples.isEmpty)
        let out2 = s.feed([InputEvent(time: 5, type: EvdevCode.EV_MSC, code: EvdevCode.MSC_TIMESTAMP, value: 0),
                           InputEvent(time: 5, type: EvdevCode.EV_SYN, code: EvdevCode.SYN_REPORT, value: 0)])
        let a = out2.samples.first { $0.sensor == .accelerometer }!.value
        #expect(abs(a.x - 24.0 / 8192) < 1e-12)
        #expect(abs(a.y - 1537.0 / 8192) < 1e-12)
        #expect(abs(a.z - (-7888.0 / 8192)) < 1e-12)
    }

    @Test func sourceStreamsFromTheTwinAndReportsUnplug() async throws {
        let (id, events) = try Self.joyconEvents()
        let twin = InMemoryEvdevDevice(identity: id)
        let source = EvdevSource(node: id, opener: twin, pairedGamepad: "/dev/input/event6 (Nintendo Switch Left Joy-Con)")
        #expect(source.info.sensors.keys.sorted { $0.rawValue < $1.rawValue } == [.accelerometer, .gyro])
        #expect(source.info.details.contains { $0 == ("paired gamepad", "/dev/input/event6 (Nintendo Switch Left Joy-Con)") })
        let got = Collected()
        let rates = try source.apply(SensorDemand(rates: [.accelerometer: 100]), sink: got.sink)
        #expect(rates == [.accelerometer: 200])
        twin.node.push(InputEvent.encode(events))
        try await waitUntil { got.samples.count == 4 }
        #expect(got.samples.allSatisfy { $0.sensor == .accelerometer })
        twin.node.unplug()
        try await waitUntil { got.failure != nil }
        #expect(got.failure?.kind == .deviceRemoved)
        #expect(got.samples.count == 4)
        _ = try source.apply(.none, sink: got.sink)
    }

    @Test func discoveryFindsMotionNodesAndPairsByUniq() throws {
        let id = try Evtest.dualshock4()
        let fs = InMemoryLinuxFileSystem()
        let mac = "a4:ae:12:00:11:22"
        func input(_ ev: String, name: String, props: String, abs: String) {
            let dev = "/sys/devices/virtual/input/input\(ev.dropFirst(5))"
            fs.setLink("/sys/class/input/\(ev)", to: dev + "/\(ev)")
            fs.setLink(dev + "/\(ev)/device", to: dev)
            fs.setFile(dev + "/name", name + "\n")
            fs.setFile(dev + "/uniq", mac + "\n")
            fs.setFile(dev + "/properties", props + "\n")
            fs.setFile(dev + "/capabilities/abs", abs + "\n")
            fs.addDevice("/dev/input/\(ev)")
        }
        input("event2", name: "Wireless Controller Motion Sensors", props: "40", abs: "3f")
        input("event3", name: "Wireless Controller", props: "0", abs: "3003f")
        var o = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: SensorHwdb(parsing: ""), fileSystem: fs)
        o.evdevOpener = InMemoryEvdevDevice(identity: id)
        let reports = LinuxSensorDiscovery.discover(options: o)
        #expect(reports.map(\.identifier) == ["evdev:/dev/input/event2"])
        #expect(reports[0].details.contains { $0 == ("paired gamepad", "/dev/input/event3 (Wireless Controller)") })
        let s = try LinuxSensorDiscovery.source(forSpec: "evdev:/dev/input/event2", options: o)
        #expect(s.info.identifier == "evdev:/dev/input/event2")
        #expect(throws: SourceError.self) { try LinuxSensorDiscovery.source(forSpec: "evdev:event9", options: o) }
        #expect(EvdevDiscovery.bits("1 0") == [64])
    }
}

@Suite struct EvdevHwdbTests {
    /// An HP laptop's `lis3lv02d` input accelerometer: the hwdb rule for platform input devices
    /// (`sensor:modalias:platform:lis3lv02d:…`) applies; here with a local quirk in a 61-*.hwdb file.
    @Test func inputAccelerometerTakesTheHwdbMatrix() throws {
        let fs = InMemoryLinuxFileSystem()
        let platform = "/sys/devices/platform/lis3lv02d"
        fs.setLink("/sys/class/input/event9", to: platform + "/input/input12/event9")
        fs.setLink(platform + "/input/input12/event9/device", to: platform + "/input/input12")
        fs.setLink(platform + "/input/input12/device", to: platform)
        fs.setLink(platform + "/subsystem", to: "/sys/bus/platform")
        fs.setFile("/sys/bus/platform/.keep", "")
        fs.setFile(platform + "/input/input12/name", "ST LIS3LV02DL Accelerometer\n")
        fs.setFile(platform + "/input/input12/properties", "0\n")
        fs.setFile(platform + "/input/input12/capabilities/abs", "7\n")
        fs.setFile(platform + "/input/input12/event9/uevent", "MAJOR=13\nMINOR=73\nDEVNAME=input/event9\nID_INPUT_ACCELEROMETER=1\n")
        fs.setFile("/sys/class/dmi/id/modalias", "dmi:bvnHP:svnHP:pnHPEliteBook8470p:\n")
        fs.addDevice("/dev/input/event9")
        let hwdb = SensorHwdb(merging: [Fixtures.hwdb, SensorHwdb(parsing: "sensor:modalias:platform:lis3lv02d:dmi:*svnHP*:pnHPEliteBook8470p:*\n ACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1\n")])
        var o = LinuxDiscoveryOptions(sysfsRoot: "/sys", devRoot: "/dev", hwdb: hwdb, fileSystem: fs)
        let axes: [UInt16: EvdevAbsInfo] = [0: .init(value: 0, minimum: -2300, maximum: 2300, resolution: 1000),
                                            1: .init(value: -1000, minimum: -2300, maximum: 2300, resolution: 1000),
                                            2: .init(value: 0, minimum: -2300, maximum: 2300, resolution: 1000)]
        o.evdevOpener = InMemoryEvdevDevice(identity: EvdevIdentity(path: "/dev/input/event9", name: "", axes: axes))
        let reports = LinuxSensorDiscovery.discover(options: o)
        let s = try #require(reports.first?.source as? EvdevSource)
        #expect(s.axisMap.driverFamily == "override")
        #expect(!s.axisMap.negatesAcceleration)
        #expect(s.axisMap.matrix == MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1"))
        #expect(s.node.name == "ST LIS3LV02DL Accelerometer")
    }
}

/// A zero reading is written as 0, never −0 (the VM rig saw `-0.0` in the CSV of a DualSense node).
@Suite struct NegativeZeroTests {
    @Test func negatedAndRotatedZerosAreZero() {
        let a = EvdevAxisMap.playstation.acceleration(Vector3(0, 0, 0))
        let r = EvdevAxisMap.playstation.rotationRate(Vector3(0, 0, 0))
        for v in [a.x, a.y, a.z, r.x, r.y, r.z] { #expect(v == 0 && v.sign == .plus, "\(a) \(r)") }
    }
}
