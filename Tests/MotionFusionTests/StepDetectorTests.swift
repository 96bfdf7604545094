@testable import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The step detector on synthetic walks whose step count is known.
@Suite struct StepDetectorTests {
    /// A deterministic normal generator (xorshift + Box–Muller).
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        mutating func normal() -> Double {
            (-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform())
        }
    }

    /// Accelerometer samples (g, Core Motion sign) of a walk at `cadence` steps/s for `seconds`, after
    /// `restBefore` s still and followed by `restAfter` s still. Each step is a vertical bounce with a
    /// heel-strike harmonic (`harmonic` × the fundamental's amplitude at twice the step frequency), a
    /// lateral sway at half the step frequency, and sensor noise; the device is held at `tilt` (rad)
    /// about x then `turn` about z. `rate` Hz, with timing jitter of `jitter` × the period.
    static func walk(cadence: Double, seconds: Double, amplitude: Double = 0.25, harmonic: Double = 0.3,
                     restBefore: Double = 2, restAfter: Double = 2, tilt: Double = 0.4, turn: Double = 1.0,
                     rate: Double = 100, jitter: Double = 0, noise: Double = 0.01, seed: UInt64 = 7)
        -> [(t: Double, a: Vector3)] {
        var rng = Noise(state: seed)
        let q = Quaternion.aboutZ(turn) * Quaternion(axis: Vector3(1, 0, 0), angle: tilt)
        var out: [(Double, Vector3)] = []
        let total = restBefore + seconds + restAfter
        var t = 0.0
        while t < total {
            let w = t - restBefore
            var world = Vector3(0, 0, 1)
            if w >= 0 && w < seconds {
                let phase = 2 * Double.pi * cadence * w
                let vertical = amplitude * (sin(phase) + harmonic * sin(2 * phase + 0.8))
                world = world + Vector3(0.3 * amplitude * sin(phase / 2), 0.2 * amplitude * cos(phase), vertical)
            }
            world = world + Vector3(noise * rng.normal(), noise * rng.normal(), noise * rng.normal())
            // Specific force in the device frame, Core Motion sign (gravity down: face up reads z = −1).
            let device = q.inverseRotate(world) * -1
            out.append((t, device))
            t += (1 + jitter * (2 * rng.uniform() - 1)) / rate
        }
        return out
    }

    static func count(_ samples: [(t: Double, a: Vector3)], _ p: StepDetectorParameters = StepDetectorParameters()) -> StepDetector {
        var d = StepDetector(parameters: p)
        for s in samples { d.process(timestamp: s.t, x: s.a.x, y: s.a.y, z: s.a.z) }
        return d
    }

    @Test(arguments: [1.4, 1.8, 2.2, 2.8])
    func countsAWalkAtKnownCadence(cadence: Double) {
        let seconds = 60.0
        let d = Self.count(Self.walk(cadence: cadence, seconds: seconds))
        let truth = cadence * seconds
        #expect(abs(Double(d.steps) - truth) <= 0.02 * truth + 1, "counted \(d.steps) of \(truth)")
    }

    @Test func orientationDoesNotMatter() {
        var counts: [Int] = []
        for (tilt, turn) in [(0.0, 0.0), (1.5, 0.3), (3.0, 2.0), (0.7, -2.5)] {
            counts.append(Self.count(Self.walk(cadence: 1.9, seconds: 40, tilt: tilt, turn: turn)).steps)
        }
        #expect(counts.allSatisfy { abs($0 - 76) <= 2 }, "\(counts)")
    }

    @Test func slowStepsWithStrongHeelStrikeAreNotDoubled() {
        // The second harmonic is as strong as the fundamental: two peaks per step.
        let d = Self.count(Self.walk(cadence: 1.3, seconds: 60, harmonic: 0.9))
        #expect(abs(d.steps - 78) <= 3, "counted \(d.steps) of 78")
    }

    @Test func irregularSamplingAndLowRate() {
        let d = Self.count(Self.walk(cadence: 1.8, seconds: 50, rate: 30, jitter: 0.4))
        #expect(abs(d.steps - 90) <= 3, "counted \(d.steps) of 90")
    }

    @Test func restAndNoiseGiveNoSteps() {
        let d = Self.count(Self.walk(cadence: 1.8, seconds: 0, restBefore: 30, restAfter: 0, noise: 0.02))
        #expect(d.steps == 0)
    }

    @Test func isolatedJoltsAreNotSteps() {
        // One knock every 2.5 s (putting the phone down, a bump): never a regular walking rhythm.
        var samples: [(t: Double, a: Vector3)] = []
        for i in 0..<3000 {
            let t = Double(i) * 0.01
            let k = t.truncatingRemainder(dividingBy: 2.5)
            let bump = k < 0.1 ? 0.8 * sin(Double.pi * k / 0.1) : 0
            samples.append((t, Vector3(0, 0, -1 - bump)))
        }
        #expect(Self.count(samples).steps == 0)
    }

    @Test func boutIsConfirmedByRegularStepsThenCountedFromItsStart() {
        var d = StepDetector()
        var firstCount = 0.0
        var increments: [Int] = []
        for s in Self.walk(cadence: 2, seconds: 10, restBefore: 1, restAfter: 0) {
            let n = d.process(timestamp: s.t, x: s.a.x, y: s.a.y, z: s.a.z)
            if n > 0 {
                if firstCount == 0 { firstCount = s.t }
                increments.append(n)
            }
        }
        // The first increment carries the confirming steps together; the rest arrive one by one.
        #expect(increments.first == d.parameters.stepsToStartBout)
        #expect(increments.dropFirst().allSatisfy { $0 == 1 || $0 == 2 })
        #expect(firstCount > 1 && firstCount < 4)
        #expect(abs(d.steps - 20) <= 1)
        let period = d.stepPeriod ?? 0
        #expect(abs(period - 0.5) < 0.03)
    }

    @Test func badSamplesAreIgnored() {
        var d = StepDetector()
        var k = 0
        for s in Self.walk(cadence: 1.8, seconds: 30) {
            k += 1
            if k % 50 == 0 { d.process(timestamp: s.t, x: .nan, y: 0, z: 1) }
            if k % 70 == 0 { d.process(timestamp: s.t - 5, x: 3, y: 3, z: 3) }
            if k % 90 == 0 { d.process(timestamp: .infinity, x: 0, y: 0, z: 1) }
            d.process(timestamp: s.t, x: s.a.x, y: s.a.y, z: s.a.z)
        }
        #expect(abs(d.steps - 54) <= 2, "counted \(d.steps) of 54")
    }

    @Test func aLongPauseEndsTheBoutButKeepsTheCount() {
        var d = StepDetector()
        for s in Self.walk(cadence: 2, seconds: 20, restAfter: 5) { d.process(timestamp: s.t, x: s.a.x, y: s.a.y, z: s.a.z) }
        #expect(!d.inBout && d.stepPeriod == nil)
        let first = d.steps
        for s in Self.walk(cadence: 2, seconds: 20, seed: 9) { d.process(timestamp: s.t + 100, x: s.a.x, y: s.a.y, z: s.a.z) }
        #expect(abs(first - 40) <= 1 && abs(d.steps - 80) <= 2, "\(first) then \(d.steps)")
    }

    @Test func stepLengthModel() {
        let m = StepLengthModel(height: 1.8)
        #expect(abs(m.stepLength(cadence: 1.8) - 0.415 * 1.8) < 0.005)
        #expect(m.stepLength(cadence: 2.2) > m.stepLength(cadence: 1.5))
        #expect(m.stepLength(cadence: .nan) == m.stepLength(cadence: 1.8))
        #expect(m.stepLength(cadence: 100) == m.stepLength(cadence: 4))
    }

    @Test func accumulatorDistanceCadenceAndPace() {
        var p = PedometerAccumulator(lengthModel: StepLengthModel(height: 1.7))
        for s in Self.walk(cadence: 2, seconds: 60, restAfter: 0) { p.process(timestamp: s.t, x: s.a.x, y: s.a.y, z: s.a.z) }
        let length = StepLengthModel(height: 1.7).stepLength(cadence: 2)
        #expect(abs(Double(p.steps) - 120) <= 2)
        #expect(abs(p.distance - Double(p.steps) * length) < 0.03 * p.distance)
        #expect(abs((p.cadence ?? 0) - 2) < 0.1)
        #expect(abs(p.activeTime - 60) < 2)
        let pace = p.averageActivePace ?? 0
        #expect(abs(pace - 1 / (2 * length)) < 0.05 * pace)
    }
}
