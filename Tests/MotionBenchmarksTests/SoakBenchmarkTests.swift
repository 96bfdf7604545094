import MotionBenchmarks
import Testing

/// The soak's goal as `bench soak` documents it, on hand-made windows.
@Suite struct SoakBenchmarkTests {
    private func windows(_ cpu: [Double], every window: Double = 60) -> [SoakBenchmark.Window] {
        cpu.enumerated().map { SoakBenchmark.Window(end_s: Double($0.offset + 1) * window, delivered: 100, cpu_s: $0.element, rss_kb: 1) }
    }

    @Test func theCPURatioComparesTheFirstAndLastFullWindowsAfterTheWarmUp() throws {
        // Windows end at 60, 120, 180, 240 s; warm-up 60 s: the first full window after it ends at 120 s.
        let w = windows([9, 1, 2, 3])
        let r = try #require(SoakBenchmark.cpuRatio(w, warmup: 60, window: 60))
        #expect(r.ratio == 3 && r.excess == 2)
        #expect(SoakBenchmark.cpuRatio(Array(w.prefix(2)), warmup: 60, window: 60) == nil, "one full window: no ratio")
        #expect(SoakBenchmark.cpuRatio(windows([0, 0, 0]), warmup: 0, window: 60)?.ratio == 1, "idle throughout: flat")
    }

    @Test func cpuGrowthNeedsBothTheRatioAndHalfAPercentOfACore() {
        #expect(SoakBenchmark.cpuGrew(windows([5, 1, 1.5, 2.5]), warmup: 60, window: 60), "2.5× and 1.5 s over 60 s")
        #expect(!SoakBenchmark.cpuGrew(windows([5, 1, 1.5, 2]), warmup: 60, window: 60), "exactly 2×: flat enough")
        #expect(!SoakBenchmark.cpuGrew(windows([5, 0.01, 0.02, 0.1]), warmup: 60, window: 60), "10× of almost nothing (0.09 s < 0.3 s)")
        #expect(!SoakBenchmark.cpuGrew(windows([5, 9]), warmup: 60, window: 60), "too short to judge")
    }

    @Test func theGoalFailsOnAnyLossReorderingGrowthOrCPU() {
        #expect(SoakBenchmark.meetsGoal(lost: 0, outOfOrder: 0, growthKilobytes: 1023, cpuGrew: false))
        #expect(!SoakBenchmark.meetsGoal(lost: 1, outOfOrder: 0, growthKilobytes: 0, cpuGrew: false))
        #expect(!SoakBenchmark.meetsGoal(lost: 0, outOfOrder: 1, growthKilobytes: 0, cpuGrew: false))
        #expect(!SoakBenchmark.meetsGoal(lost: 0, outOfOrder: 0, growthKilobytes: 1024, cpuGrew: false))
        #expect(!SoakBenchmark.meetsGoal(lost: 0, outOfOrder: 0, growthKilobytes: 0, cpuGrew: true))
    }
}
