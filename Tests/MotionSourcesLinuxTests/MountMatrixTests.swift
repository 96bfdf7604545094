import Testing
import MotionFusion
@testable import MotionSourcesLinux

@Suite struct MountMatrixTests {
    @Test func parsesEveryMatrixOfTheRealHwdb() throws {
        let text = try Fixtures.text("mount-matrices/systemd-v252.39-debian_60-sensor.hwdb")
        let hwdb = SensorHwdb(parsing: text)
        let propertyLines = text.split(separator: "\n").filter { $0.hasPrefix(" ACCEL_MOUNT_MATRIX=") }.count
        let matrices = hwdb.entries.compactMap { $0.value("ACCEL_MOUNT_MATRIX") }
        #expect(propertyLines == 203)
        #expect(matrices.count == propertyLines)
        #expect(hwdb.entries.reduce(0) { $0 + $1.patterns.count } == 290)
        var degenerate = 0
        for m in matrices {
            let parsed = try #require(MountMatrix(parsing: m), "\(m)")
            if !parsed.isOrthonormal { degenerate += 1 }
        }
        // Two real quirks repeat a row (Bush tablet, Hometech Wi101): parsed, flagged degenerate.
        #expect(degenerate == 2)
        #expect(hwdb.warnings.isEmpty)
    }

    @Test func oddSpellingsParse() {
        #expect(MountMatrix(parsing: "-0, -1, 0; 0, 0, -1; 1, 0, 0") == MountMatrix(Vector3(0, -1, 0), Vector3(0, 0, -1), Vector3(1, 0, 0)))
        #expect(MountMatrix(parsing: "0,1,0;-1,0,0;-1,0,0")?.determinant == 0)
        #expect(MountMatrix(parsing: "0, -1, 0;1, 0, 0;0, 0, 1 ") == MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
        #expect(MountMatrix(parsing: "-1, 0, 0; 0,-1, 0; 0, 0, 1") == MountMatrix(Vector3(-1, 0, 0), Vector3(0, -1, 0), Vector3(0, 0, 1)))
        #expect(MountMatrix(parsing: "1, 0; 0, 1") == nil)
        #expect(MountMatrix(parsing: "a, 0, 0; 0, 1, 0; 0, 0, 1") == nil)
        #expect(MountMatrix(parsing: "0.7071, -0.7071, 0; 0.7071, 0.7071, 0; 0, 0, 1")!.isOrthonormal)
    }

    @Test func hwdbLookupsMatchRealMachines() {
        let hwdb = Fixtures.hwdb
        // Lenovo Miix 320: a pattern with a leading '*' in the modalias part.
        let miix = SensorHwdb.lookupKey(label: nil, parentModalias: "acpi:BOSC0200:BOSC0200:",
                                        dmiModalias: "dmi:bvnLENOVO:bvr5HCN31WW:bd07/05/2017:svnLENOVO:pn80XF:pvrLenovoMIIX320-10ICR:rvnLENOVO:rnLenovoMIIX320:")
        #expect(hwdb.properties(forKey: miix)["ACCEL_MOUNT_MATRIX"] == "0, -1, 0; -1, 0, 0; 0, 0, 1")
        // A comment between two match lines does not split the record (Aquarius Cmp NS483, MXC4005).
        let aquarius = SensorHwdb.lookupKey(label: nil, parentModalias: "acpi:MXC4005:MXC4005:", dmiModalias: "dmi:bvnX:svnAquarius:pnCmp NS483:")
        #expect(hwdb.properties(forKey: aquarius)["ACCEL_MOUNT_MATRIX"] == "-1, 0, 0; 0, 1, 0; 0, 0, 1")
        // Labelled keys (cros-ec base accelerometer).
        let cros = SensorHwdb.lookupKey(label: "accel-base", parentModalias: "platform:cros-ec-accel", dmiModalias: "dmi:bvncoreboot:")
        #expect(hwdb.properties(forKey: cros)["ACCEL_MOUNT_MATRIX"] == "-1, 0, 0; 0, 1, 0; 0, 0, 1")
        // Inner blanks belong to the pattern (AYANEO 2).
        let ayaneo = SensorHwdb.lookupKey(label: nil, parentModalias: "acpi:BMI0160:BMI0160:", dmiModalias: "dmi:bvnAMI:svnAYANEO:pnAYANEO 2S:")
        #expect(hwdb.properties(forKey: ayaneo)["ACCEL_MOUNT_MATRIX"] == "-0, -1, 0; 0, 0, -1; 1, 0, 0")
        // Dell: ACCEL_LOCATION only, no matrix.
        let dell = SensorHwdb.lookupKey(label: nil, parentModalias: "platform:HID-SENSOR-200073", dmiModalias: "dmi:svnDellInc.:sku0A3E:")
        #expect(hwdb.properties(forKey: dell) == ["ACCEL_LOCATION": "base"])
        #expect(hwdb.properties(forKey: "sensor:modalias:acpi:NOPE:dmi:svnNobody:").isEmpty)
    }

    @Test func deviceTreeMatricesOfPinePhoneAndLibrem5() throws {
        let text = try Fixtures.text("mount-matrices/kernel-6.12_dts_pinephone-librem5_imu-nodes.txt")
        // Collect each `mount-matrix = "…", …;` statement (it spans three lines).
        var found: [String: MountMatrix] = [:]
        var file = ""
        var collecting: String?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("### ") { file = String(line.dropFirst(4)) }
            if let r = line.range(of: "mount-matrix =") { collecting = String(line[r.upperBound...]) } else if collecting != nil { collecting! += String(line) }
            if let c = collecting, c.contains(";") {
                found[file + (found[file] == nil ? "" : "#2")] = MountMatrix(parsing: c.replacingOccurrences(of: ";", with: ""))
                collecting = nil
            }
        }
        let pine = try #require(found["allwinner/sun50i-a64-pinephone.dtsi"])
        #expect(pine == MountMatrix(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
        // The PinePhone's MPU6050 x axis points along the device's +y.
        #expect(pine.apply(Vector3(1, 0, 0)) == Vector3(0, 1, 0))
        #expect(found["freescale/imx8mq-librem5-r2.dts"] == MountMatrix(Vector3(1, 0, 0), Vector3(0, -1, 0), Vector3(0, 0, 1)))
        #expect(found["freescale/imx8mq-librem5-r3.dtsi"] == MountMatrix(Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, -1)))
        #expect(found["freescale/imx8mq-librem5-r3.dtsi#2"] == MountMatrix(Vector3(1, 0, 0), Vector3(0, -1, 0), Vector3(0, 0, -1)))
        #expect(found.values.allSatisfy { $0.isOrthonormal })
    }

    @Test func overrideSpecParses() {
        let o = LinuxDiscoveryOptions.parseOverrides("iio:device0=0, 1, 0; 1, 0, 0; 0, 0, 1|accel_3d=-1,0,0;0,-1,0;0,0,1|junk")
        #expect(o["iio:device0"] == MountMatrix(Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
        #expect(o["accel_3d"]?.apply(Vector3(1, 2, 3)) == Vector3(-1, -2, 3))
        #expect(o.count == 2)
    }
}
