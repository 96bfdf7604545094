import Foundation
import Testing
import MotionFusion
@testable import MotionSourcesLinux

/// Inputs the fuzz targets (Fuzz/) found crashing, kept as tests of the normal suite.
@Suite struct FuzzRegressionTests {
    static func bytes(_ base64: String) -> [UInt8] { Array(Data(base64Encoded: base64) ?? Data()) }

    /// evdev: an event whose seconds field is near Int64.min decodes to a time below −9.2e18 s;
    /// encoding it back trapped on `Int64(time)`.
    @Test func evdevEventWithHugeSecondsEncodesBack() {
        let input = Self.bytes("ZAAAAAAAAAAFAAAAAAAAAAMAAAAA/v//ZAD/////////AQAAAAAAAAUAAAAAAAAAAwABAAcAAABkAAAAAAAAAAUAAAAAAAAAAwACAABAAABkAAAAAAAAAAUAAAAAAAAAAAAAAAAAAABlAAAAAAAAAD9CDwAAAAAAAwAAAAAAAIBlAAAAAP39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f39/f0AAAA/Qg8AAAAAAAAAAAAAAAAA")
        #expect(input.count == 213)
        let events = InputEvent.decode(input)
        #expect(events.count == 8)
        #expect(events.contains { $0.time < -9.2e18 }, "the event that trapped: seconds near Int64.min")
        let again = InputEvent.decode(InputEvent.encode(events))
        #expect(again.map(\.type) == events.map(\.type))
        #expect(again.map(\.code) == events.map(\.code))
        #expect(again.map(\.value) == events.map(\.value))
        let extreme = InputEvent.decode(InputEvent.encode([InputEvent(time: .infinity, type: 3, code: 0, value: 1),
                                                           InputEvent(time: -1e300, type: 3, code: 1, value: 2),
                                                           InputEvent(time: 1e300, type: 3, code: 2, value: 3)]))
        #expect(extreme.map(\.value) == [1, 2, 3])
        #expect(extreme[0].time == 0)
    }

    /// sysfs: a scan type with a repeat count of 66666666663 was accepted; the scan size (and any
    /// buffer sized from it) was then tens of gigabytes. The kernel's repeat is a u8.
    @Test func scanTypeRepeatIsAtMost255() {
        #expect(IIOScanType(parsing: "le:s2/8X66666666663>>2") == nil)
        #expect(IIOScanType(parsing: "le:s16/16X256>>0") == nil)
        #expect(IIOScanType(parsing: "le:s16/16X255>>0")?.totalBytes == 510)
        #expect(IIOScanType(parsing: "le:s14/16X3>>2")?.repeatCount == 3)
    }
}
