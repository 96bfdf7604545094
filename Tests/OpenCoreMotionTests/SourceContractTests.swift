import MotionSources
import Testing

@Suite struct SourceContractTests {
    @Test func capabilityClampsBadRatesToTheFastest() {
        let c = SensorCapability(minimumRate: 1, maximumRate: 200)
        #expect(c.clamp(rate: .nan) == 200)
        #expect(c.clamp(rate: -5) == 200)
        #expect(c.clamp(rate: 0.01) == 1)
        #expect(c.clamp(rate: 1_000) == 200)
        #expect(c.clamp(rate: 50) == 50)
    }
}
