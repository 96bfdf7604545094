@testable import MotionSources
import Testing

@Suite struct PercentileTests {
    @Test func nearestRankOfSortedValues() {
        let v = (1...100).map(Double.init)
        #expect(v.nearestRankPercentile(0.5) == 50)
        #expect(v.nearestRankPercentile(0.99) == 99)
        #expect(v.nearestRankPercentile(1) == 100)
        #expect(v.nearestRankPercentile(0) == 1)
        #expect([3.0].nearestRankPercentile(0.99) == 3)
        #expect([1.0, 2, 3, 4].nearestRankPercentile(0.5) == 2, "the 2nd of 4: at least half lie at or below it")
    }

    @Test func emptyAndOutOfRangeQuantiles() {
        #expect([Double]().nearestRankPercentile(0.5) == nil)
        #expect([1.0, 2].nearestRankPercentile(7) == 2)
        #expect([1.0, 2].nearestRankPercentile(-1) == 1)
        #expect([1.0, 2].nearestRankPercentile(.nan) == 1)
    }
}
