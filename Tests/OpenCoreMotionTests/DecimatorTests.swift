@testable import OpenCoreMotion
import Testing

/// Thinning by timestamp, on jittered streams like those of a loaded machine or a FIFO-fed device.
@Suite struct DecimatorTests {
    /// A 1 kHz stream whose 40th sample is 1.2 ms late and whose 41st catches up right after it.
    private static let lateThenCatchUp: [Double] = (0..<100).map { k in
        let t = 10 + Double(k) * 0.001
        return k == 40 ? t + 0.0012 : (k == 41 ? t + 0.00021 : t)
    }

    @Test func aConsumerAtTheSourcesRateGetsEverySampleDespiteJitter() {
        var d = Decimator(interval: 0.001)
        let passed = Self.lateThenCatchUp.filter { d.accept($0, sourcePeriod: 0.001) }
        #expect(passed == Self.lateThenCatchUp)
        // Asking for more than the source gives (shorter interval) is the same: every sample, once.
        var faster = Decimator(interval: 0.0005)
        #expect(Self.lateThenCatchUp.filter { faster.accept($0, sourcePeriod: 0.001) }.count == 100)
    }

    @Test func aSlowerConsumerIsStillThinnedByTimestamp() {
        var d = Decimator(interval: 0.002)
        let passed = Self.lateThenCatchUp.filter { d.accept($0, sourcePeriod: 0.001) }
        #expect((48...51).contains(passed.count), "about every other sample: \(passed.count)")
        // The schedule stays on its grid: the late sample takes its slot and the catch-up is thinned.
        #expect(passed.contains(Self.lateThenCatchUp[40]) && !passed.contains(Self.lateThenCatchUp[41]))
        #expect(zip(passed.dropFirst(), passed).allSatisfy { $0 > $1 }, "in order, none repeated")
    }
}
