import MotionSources
import Testing

@Suite struct SimulatedWeatherTests {
    /// The simulated weather is bounded: over 30 simulated days every seed and scenario stays within
    /// 95–106 kPa (a linear tendency of 1 hPa in 3 hours alone would have moved it 24 kPa), yet the
    /// weather does change over days, and its first hour has an ordinary tendency: at most 1 hPa in
    /// 3 hours, plus the 3 Pa minute-scale oscillation.
    @Test func theWeatherStaysPlausibleForAMonthAndStartsWithAnOrdinaryTendency() {
        let day = 86_400.0
        for seed in UInt64(1)...24 {
            for scenario in BarometerScenario.allCases {
                let b = SimulatedBarometer(scenario: scenario, seed: seed, startTime: 50)
                var low = Double.infinity, high = -Double.infinity
                for k in 0...(30 * 24 * 6) {
                    let p = b.pressureWithoutNoise(at: 50 + Double(k) * 600 + 7)
                    low = min(low, p)
                    high = max(high, p)
                }
                #expect(low > 95 && high < 106, "seed \(seed) \(scenario): \(low)…\(high) kPa over 30 days")
                #expect(high - low > 0.5, "seed \(seed) \(scenario): the weather hardly changed (\(high - low) kPa)")
            }
            let b = SimulatedBarometer(scenario: .still, seed: seed)
            let firstHour = b.weather(after: 3600) - b.weather(after: 0)
            #expect(abs(firstHour) <= 0.1 / 3 + 0.006, "seed \(seed): \(firstHour) kPa in the first hour")
            #expect(b.weather(after: 0) == 0)
            #expect(abs(b.weather(after: 30 * day)) < 1.6 + 0.006)
        }
    }
}
