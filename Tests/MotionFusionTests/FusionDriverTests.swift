import MotionFusion
import Testing

@Suite struct FusionDriverTests {
    let still = Vector3(0, 0, -1)
    let rate = Vector3(0.01, -0.02, 0.3)

    @Test func noOutputBeforeAnAccelerometerAndAGyroscopeSample() {
        var d = FusionDriver(usesMagnetometer: false)
        do { let r = d.updateGyro(rate, timestamp: 0.00); #expect(!r) }
        #expect(!d.hasStarted)
        d.updateAccelerometer(still, timestamp: 0.005)
        #expect(d.hasStarted)
        do { let r = d.updateGyro(rate, timestamp: 0.01); #expect(r) }
        // Accelerometer and magnetometer samples never produce an output of their own.
        d.updateMagnetometer(Vector3(20, 0, -40), timestamp: 0.012)
        do { let r = d.updateGyro(rate, timestamp: 0.02); #expect(r) }
    }

    @Test func eachSensorGetsTheTimeStepSinceItsOwnPreviousSample() {
        // Gyro at 100 Hz, accelerometer at 50 Hz, magnetometer at 25 Hz, interleaved.
        var d = FusionDriver(usesMagnetometer: true)
        var f = AttitudeFilter(usesMagnetometer: true)
        let nominal = f.parameters.nominalTimeStep
        var last: [Int: Double] = [:]
        for i in 0..<400 {
            let t = 3 + Double(i) * 0.01
            let mag = Vector3(20, Double(i % 7) * 0.1, -40)
            if i % 4 == 0 {
                d.updateMagnetometer(mag, timestamp: t)
                f.updateMagnetometer(mag, dt: last[2].map { t - $0 } ?? nominal)
                last[2] = t
            }
            if i % 2 == 0 {
                d.updateAccelerometer(still, timestamp: t)
                f.updateAccelerometer(still, dt: last[0].map { t - $0 } ?? nominal)
                last[0] = t
            }
            do { let r = d.updateGyro(rate, timestamp: t); #expect(r) }
            f.updateGyro(rate, dt: last[1].map { t - $0 } ?? nominal)
            last[1] = t
            #expect(d.estimate == f.estimate)
        }
    }

    @Test func aTimestampThatDoesNotIncreaseDropsTheSample() {
        var d = FusionDriver(usesMagnetometer: false)
        d.updateAccelerometer(still, timestamp: 1)
        do { let r = d.updateGyro(rate, timestamp: 1); #expect(r) }
        let before = d.estimate
        do { let r = d.updateGyro(Vector3(5, 5, 5), timestamp: 1); #expect(!r, "repeated timestamp") }
        do { let r = d.updateGyro(Vector3(5, 5, 5), timestamp: 0.5); #expect(!r, "backwards") }
        do { let r = d.updateAccelerometer(Vector3(3, 0, 0), timestamp: 0.9); #expect(!r) }
        do { let r = d.updateGyro(Vector3(.nan, 0, 0), timestamp: 2); #expect(!r, "not finite") }
        do { let r = d.updateGyro(rate, timestamp: .infinity); #expect(!r) }
        #expect(d.estimate == before)
        #expect(d.filter.state.skippedSamples == 0, "dropped before the filter")
        // The sensor's previous timestamp is kept: the next step is measured from t = 1.
        var reference = d
        do { let r = d.updateGyro(rate, timestamp: 1.01); #expect(r) }
        _ = reference.updateGyro(rate, timestamp: 1.01)
        #expect(d.estimate == reference.estimate)
    }

    @Test func aGapIsIntegratedForAtMostTheMaximumTimeStep() {
        // Any gap longer than the maximum step integrates the same: that maximum.
        func afterGap(_ gap: Double) -> AttitudeEstimate {
            var d = FusionDriver(usesMagnetometer: false)
            d.updateAccelerometer(still, timestamp: 0)
            _ = d.updateGyro(rate, timestamp: 0)
            _ = d.updateGyro(rate, timestamp: gap)
            return d.estimate
        }
        #expect(afterGap(10) == afterGap(1000))
        #expect(afterGap(10) != afterGap(0.05))
    }

    @Test func sixDIgnoresTheMagnetometer() {
        var d = FusionDriver(usesMagnetometer: false)
        do { let r = d.updateMagnetometer(Vector3(20, 0, -40), timestamp: 0); #expect(!r) }
        #expect(!d.estimate.hasMagneticField)
    }
}
