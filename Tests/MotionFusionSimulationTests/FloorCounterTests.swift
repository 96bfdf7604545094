import MotionFusion
import MotionSources
import Testing

/// Floors from the simulator's barometer, whose true altitude is known.
@Suite struct FloorCounterTests {
    /// Feeds `seconds` of `scenario` at 25 Hz; `walking` says whether the user walks at a time.
    static func count(_ scenario: BarometerScenario, seed: UInt64, seconds: Double,
                      walking: (Double) -> Bool) -> FloorCounter {
        var barometer = SimulatedBarometer(scenario: scenario, seed: seed, startTime: 0)
        var counter = FloorCounter()
        var k = 0.0
        while k / 25 < seconds {
            let t = k / 25
            counter.process(timestamp: t, pressure: barometer.sample(at: t), walking: walking(t))
            k += 1
        }
        return counter
    }

    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func stairsCountThreeFloorsEachWay(_ seed: UInt64) {
        // Ten 104 s cycles of 3 floors up and 3 down, walking throughout the flights, standing between.
        let counter = Self.count(.stairs, seed: seed, seconds: 1040) { t in
            let u = t.truncatingRemainder(dividingBy: 104)
            return (u >= 10 && u < 52) || u >= 62
        }
        #expect(counter.ascended == 30, "seed \(seed): \(counter.ascended) up")
        #expect(counter.descended == 30, "seed \(seed): \(counter.descended) down")
        // Halfway up the first flight nothing is counted yet; at the first landing one floor is.
        let half = Self.count(.stairs, seed: seed, seconds: 15) { $0 >= 10 }
        #expect(half.ascended == 0)
        let one = Self.count(.stairs, seed: seed, seconds: 23.5) { $0 >= 10 }
        #expect(one.ascended == 1 && one.descended == 0)
    }

    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func aLiftRiddenStandingCountsNothing(_ seed: UInt64) {
        let counter = Self.count(.lift, seed: seed, seconds: 300) { _ in false }
        #expect(counter.ascended == 0 && counter.descended == 0)
        #expect(counter.altitude != nil)
        // The same height walked (stairs to the 10th floor) is 10 floors.
        let walked = Self.count(.lift, seed: seed, seconds: 40) { _ in true }
        #expect(walked.ascended == 10, "\(walked.ascended)")
    }

    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func walkingOnOneFloorCountsNothing(_ seed: UInt64) {
        // 20 minutes walking on the flat: noise and the weather's drift stay under a floor.
        let counter = Self.count(.still, seed: seed, seconds: 1200) { _ in true }
        #expect(counter.ascended == 0 && counter.descended == 0)
    }

    @Test func badReadingsAreIgnored() {
        var counter = FloorCounter()
        for k in 0..<100 {
            let t = Double(k) / 25
            let p = k % 7 == 0 ? Double.nan : k % 11 == 0 ? -5 : k % 13 == 0 ? .infinity : 101.0
            counter.process(timestamp: t, pressure: p, walking: true)
        }
        #expect(counter.ascended == 0 && counter.descended == 0)
        #expect(counter.altitude.map { abs($0 - FloorCounter.altitude(pressure: 101)) < 1e-9 } == true)
        #expect(abs(FloorCounter.altitude(pressure: 101.325)) < 1e-9)
        // 1 hPa less is about 8.3 m higher near sea level.
        #expect(abs(FloorCounter.altitude(pressure: 101.225) - 8.33) < 0.02)
    }
}
