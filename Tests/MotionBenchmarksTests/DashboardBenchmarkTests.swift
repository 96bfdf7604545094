@testable import MotionBenchmarks
import Testing

@Suite struct DashboardBenchmarkTests {
    @Test func countsSampleRowsPerStream() {
        let tally = DashboardBenchmark.Tally()
        DashboardBenchmark.count(
            #"{"type":"samples","seq":1,"accelerometer":[[1,0,0,-1],[2,0,0,-1]],"deviceMotion":[[1,0,0,0,0,0,0,1,0,0,-1,0,0,0,0,0,0,0,0,0,-1,null]]}"#,
            into: tally)
        DashboardBenchmark.count(#"{"type":"status","sources":[]}"#, into: tally)
        let c = tally.counts.withLock { $0 }
        #expect(c.messages == 2, "every message counts, samples or not")
        #expect(c.samples == ["accelerometer": 2, "deviceMotion": 1])
    }
}
