import Foundation
import MotionSources
import Testing

/// ``MonotonicClock/unixTimeAtBoot()`` against Foundation's own clocks.
@Suite struct UnixTimeAtBootTests {
    @Test func agreesWithFoundationsWallClockMinusUptime() {
        let foundation = Date().timeIntervalSince1970 - ProcessInfo.processInfo.systemUptime
        let ours = MonotonicClock.unixTimeAtBoot()
        // Both read two clocks a few µs apart; a wall-clock step between the reads is the only way to differ more.
        #expect(abs(ours - foundation) < 0.01)
        // A timestamp of now maps to the wall clock of now.
        #expect(abs(ours + MonotonicClock.now() - Date().timeIntervalSince1970) < 0.01)
        // After 2001 and before 2100.
        #expect(ours > 978_307_200 && ours < 4_102_444_800)
    }
}
