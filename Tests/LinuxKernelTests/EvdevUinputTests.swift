import Foundation
import Testing

/// A game controller's motion node made through `/dev/uinput` (`scripts/vm/devices/uinput_motion.py`,
/// `INPUT_PROP_ACCELEROMETER` as `hid-sony` makes it) read by the evdev source through the kernel's
/// real evdev (`scripts/vm/scenarios/evdev-uinput.sh`, one boot; expected values from
/// `scripts/vm/devices/README.md`).
@Suite(.serialized, .enabled(if: VMRig.enabled, VMRig.skipComment))
struct EvdevUinputTests {
    static let boot = VMRig.Shared("evdev-uinput.sh")

    @Test func theNodeIsAMotionSensorThatSensorsLists() async throws {
        let run = await Self.boot.value
        guard run.reachedDone("evdev") else { return }
        let node = run.result("evdev node")
        #expect(node?.fields["properties"] == "40", "INPUT_PROP_ACCELEROMETER")
        #expect(node?.fields["msc"] == "20", "MSC_TIMESTAMP")
        let s = run.result("evdev sensors")
        #expect(s?.int("status") == 0)
        #expect((s?.int("listed") ?? 0) >= 1)
    }

    @Test(arguments: [
        ("face-up accelerometer", 0.0, 0.0, -1.0),
        ("face-up gyro", 0.0, 0.0, 0.0),
        ("upright accelerometer", 0.0, -1.0, 0.0),
        ("spin gyro", 0.0, 0.0, 0.5),
        ("spin accelerometer", 0.0, 0.0, -1.0),
    ])
    func posesReadAsCoreMotionDefinesThem(step: String, x: Double, y: Double, z: Double) async throws {
        let run = await Self.boot.value
        guard run.reachedDone("evdev"), let r = run.result("evdev \(step)") else { return }
        #expect(r.int("status") == 0)
        let stat = try #require(r.stat, "\(r.words)")
        #expect(stat.rows >= 20)
        #expect(stat.backwards == 0)
        #expect(abs(stat.mean.x - x) <= 0.001 && abs(stat.mean.y - y) <= 0.001 && abs(stat.mean.z - z) <= 0.001,
                "\(step): mean \(stat.mean), expected (\(x), \(y), \(z))")
    }

    @Test func afterSYNDroppedTheStateIsReadAgain() async throws {
        let run = await Self.boot.value
        guard run.reachedDone("evdev"), let r = run.result("evdev syn-dropped") else { return }
        #expect(r.int("status") == 0)
        #expect((r.int("face_up_rows") ?? 0) > 0 && (r.int("upright_rows") ?? 0) > 0)
        let last = (r.fields["last"] ?? "").split(separator: ",").compactMap { Double($0) }
        #expect(last.count == 3 && abs(last[0]) <= 0.001 && abs(last[1] + 1) <= 0.001 && abs(last[2]) <= 0.001,
                "upright after the overflow: \(last)")
        // The control: a reader that never re-reads did miss the change, so the overflow happened.
        let naive = run.result("evdev syn-dropped-naive")
        #expect((naive?.int("dropped") ?? 0) >= 1, "the step proved nothing without a drop")
    }

    @Test func unpluggingTheControllerKeepsTheRowsAndEndsWithOneError() async throws {
        let run = await Self.boot.value
        guard run.reachedDone("evdev"), let r = run.result("evdev unplug") else { return }
        #expect(r.int("status") == 1)
        #expect(r.int("error_lines") == 1)
        #expect(r.int("stderr_lines") == 1)
        let rows = r.int("rows") ?? 0, before = r.int("rows_at_unplug") ?? 0
        #expect(before >= 30 && rows >= before, "\(rows) rows, \(before) at the unplug")
        let mean = r.words.prefix(3).compactMap(Double.init)
        #expect(mean.count == 3 && abs(mean[2] + 1) <= 0.001, "\(mean)")
    }

    @Test func theTimestampWrapKeepsTimeMonotonic() async throws {
        let run = await Self.boot.value
        guard run.reachedDone("evdev"), let r = run.result("evdev timestamp-wrap") else { return }
        #expect(r.int("status") == 0)
        let stat = try #require(r.stat)
        #expect(stat.backwards == 0)
        // A mishandled wrap jumps by about 71 minutes (2^32 µs); under load the node itself stalls for
        // up to ~0.45 s, so the bound is 1 s.
        #expect(stat.maxDt < 1)
        #expect(stat.rows >= 100)
    }
}
