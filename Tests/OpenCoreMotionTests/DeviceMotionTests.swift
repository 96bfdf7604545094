import Foundation
import MotionFusion
import MotionSources
@testable import OpenCoreMotion
import Testing

/// Device motion through `CMMotionManager`, on the simulator's virtual clock against its ground truth.
@Suite struct DeviceMotionTests {
    /// Collects `count` device-motion updates in `frame` from a virtual-clock simulator.
    func collect(
        _ options: SimulationOptions, frame: CMAttitudeReferenceFrame, count: Int,
        configure: (CMMotionManager) -> Void = { _ in }
    ) async -> (updates: [CMDeviceMotion], errors: [NSError], device: SimulatedDevice) {
        let device = SimulatedDevice(options: options, clock: .virtual(startTime: 1000))
        // Read by the wait's condition on the handler's thread: like Apple's, the manager is not
        // `Sendable`, but it is callable from any thread (its state is behind a lock).
        nonisolated(unsafe) let manager = CMMotionManager(source: device)
        manager.deviceMotionUpdateInterval = 0.01
        configure(manager)
        let updates = Recorder<CMDeviceMotion>()
        // An error (which ends updates) wakes the wait too.
        let errors = Recorder<NSError>(signalling: updates.changes)
        let queue = serialQueue()
        manager.startDeviceMotionUpdates(using: frame, to: queue) { motion, error in
            if let motion { updates.append(motion) }
            if let error { errors.append(error as NSError) }
        }
        _ = await updates.until { updates.count >= count || !manager.isDeviceMotionActive }
        manager.stopDeviceMotionUpdates()
        _ = await drained(queue)
        return (Array(updates.all.prefix(count)), errors.all, device)
    }

    func angle(_ a: Vector3, _ b: Vector3) -> Double {
        acos(max(-1, min(1, a.dot(b) / (a.length * b.length)))) * 180 / .pi
    }

    @Test func gravityFollowsTheTrueTiltInTheArbitraryFrame() async {
        let (updates, errors, device) = await collect(SimulationOptions(scenario: .handheld, seed: 3), frame: .xArbitraryZVertical, count: 3000)
        #expect(errors.isEmpty)
        #expect(updates.count == 3000)
        let late = updates.suffix(1000)
        let worst = late.map { m in
            let truth = device.truth(at: m.timestamp).gravity
            return angle(Vector3(m.gravity.x, m.gravity.y, m.gravity.z), truth)
        }.max() ?? 180
        #expect(worst < 1.0, "gravity within 1° of the truth while held by hand, worst \(worst)°")
        for m in late {
            let sum = Vector3(m.gravity.x + m.userAcceleration.x, m.gravity.y + m.userAcceleration.y, m.gravity.z + m.userAcceleration.z)
            #expect(abs(Vector3(m.gravity.x, m.gravity.y, m.gravity.z).length - 1) < 1e-9)
            _ = sum
        }
        #expect(late.allSatisfy { $0.heading == -1 }, "no heading in an arbitrary frame")
        #expect(late.allSatisfy { $0.magneticField.accuracy == .uncalibrated && $0.magneticField.field.x == 0 && $0.magneticField.field.y == 0 && $0.magneticField.field.z == 0 })
        #expect(late.allSatisfy { $0.headingAccuracy == -1 }, "no heading, so no heading accuracy")
        #expect(abs(updates.first!.attitude.yaw) < 1e-9, "the arbitrary frame starts at yaw 0")
    }

    /// The largest heading error in degrees, as BROAD defines it: the rotation about the vertical of
    /// e = q_estimate ⊗ q_truth⁻¹, 2·atan(|e_z| / |e_w|). It is well defined in every pose.
    func worstHeadingError(_ updates: ArraySlice<CMDeviceMotion>, _ device: SimulatedDevice) -> Double {
        updates.map { m -> Double in
            let e = m.attitude.rotation * device.truth(at: m.timestamp).attitude.conjugate
            return 2 * atan2(abs(e.z), abs(e.w)) * 180 / .pi
        }.max() ?? 180
    }

    @Test func headingInTheMagneticNorthFrameMatchesTheTruth() async {
        var options = SimulationOptions(scenario: .handheld, seed: 5)
        options.hardIron = .zero
        let (updates, errors, device) = await collect(options, frame: .xMagneticNorthZVertical, count: 4000)
        #expect(errors.isEmpty)
        let late = updates.suffix(500)
        #expect(late.allSatisfy { (0..<360).contains($0.heading) })
        let worst = worstHeadingError(late, device)
        #expect(worst < 5, "heading within 5° of the truth after 40 s, worst \(worst)°")
        let compass = late.map { m -> Double in
            let d = abs(m.heading - device.truth(at: m.timestamp).attitude.compassHeading)
            return min(d, 360 - d)
        }.max() ?? 180
        #expect(compass < 5, "compass heading of a hand-held device within 5°, worst \(compass)°")
    }

    @Test func hardIronIsCalibratedOnceTheDeviceTurnsAround() async {
        // Default options carry a hard iron of about 28 µT against a 48 µT Earth field.
        let (updates, _, device) = await collect(SimulationOptions(scenario: .rotate, seed: 4), frame: .xMagneticNorthZVertical, count: 9000)
        let late = updates.suffix(1000)
        #expect(late.allSatisfy { $0.magneticField.accuracy.rawValue >= CMMagneticFieldCalibrationAccuracy.medium.rawValue })
        if let m = late.last {
            let field = Vector3(m.magneticField.field.x, m.magneticField.field.y, m.magneticField.field.z)
            #expect(abs(field.length - 48) < 3, "calibrated field magnitude near the Earth's 48 µT, got \(field.length)")
        }
        let worst = worstHeadingError(late, device)
        #expect(worst < 10, "heading within 10° while spinning after calibration, worst \(worst)°")
    }

    @Test func trueNorthNeedsALocationAndThenAddsTheDeclination() async {
        let noLocation = await collect(SimulationOptions(scenario: .still), frame: .xTrueNorthZVertical, count: 10)
        #expect(noLocation.updates.isEmpty)
        #expect(noLocation.errors.map(\.code) == [Int(CMErrorTrueNorthNotAvailable.rawValue)])
        #expect(noLocation.errors.first?.domain == CMErrorDomain)

        // Boulder, Colorado: WMM2025 puts the declination near +7.5° (east) in 2026.
        let location = CMMotionManager.Location(latitude: 40.0, longitude: -105.27)
        let declination = MagneticDeclination.degrees(at: location)!
        #expect(declination > 6 && declination < 9)
        let options = SimulationOptions(scenario: .still, seed: 2)
        let magnetic = await collect(options, frame: .xMagneticNorthZVertical, count: 2000).updates.last!
        let trueNorth = await collect(options, frame: .xTrueNorthZVertical, count: 2000) { $0.location = location }.updates.last!
        var difference = trueNorth.heading - magnetic.heading
        if difference > 180 { difference -= 360 }
        if difference < -180 { difference += 360 }
        #expect(abs(difference - declination) < 0.5, "true heading = magnetic heading + declination")
    }

    @Test func availableFramesFollowTheSensors() async {
        let imu6 = CMMotionManager(source: ManualSource(sensors: [.accelerometer, .gyro]))
        #expect(imu6.availableReferenceFrames == .xArbitraryZVertical)
        let imu9 = CMMotionManager(source: ManualSource())
        #expect(imu9.availableReferenceFrames == [.xArbitraryZVertical, .xArbitraryCorrectedZVertical, .xMagneticNorthZVertical, .xTrueNorthZVertical])
        let accelOnly = CMMotionManager(source: ManualSource(sensors: [.accelerometer]))
        #expect(accelOnly.availableReferenceFrames.isEmpty)
        #expect(!accelOnly.isDeviceMotionAvailable)

        // Asking a 6-axis device for magnetic north is refused with CMErrorNotAvailable.
        let errors = Recorder<NSError>()
        let q = serialQueue()
        imu6.startDeviceMotionUpdates(using: .xMagneticNorthZVertical, to: q) { _, e in if let e { errors.append(e as NSError) } }
        #expect(await drained(q))
        #expect(errors.all.map(\.code) == [Int(CMErrorNotAvailable.rawValue)])
        #expect(!imu6.isDeviceMotionActive)
    }

    @Test func aMagnetometerThatCannotCalibrateAsksForMovementOnce() async {
        // Lying still, the magnetometer sees one direction only: hard iron cannot be solved.
        let (updates, errors, _) = await collect(SimulationOptions(scenario: .still), frame: .xMagneticNorthZVertical, count: 800) {
            $0.showsDeviceMovementDisplay = true
        }
        #expect(errors.map(\.code) == [Int(CMErrorDeviceRequiresMovement.rawValue)])
        #expect(updates.count == 800, "updates go on after the notice")

        let quiet = await collect(SimulationOptions(scenario: .still), frame: .xMagneticNorthZVertical, count: 800)
        #expect(quiet.errors.isEmpty, "without showsDeviceMovementDisplay there is no notice")
    }

    @Test func rotationRateHasTheGyroBiasRemoved() async {
        var options = SimulationOptions(scenario: .still, seed: 9)
        options.gyroBias = Vector3(0.02, -0.015, 0.01)  // rad/s, about 1°/s
        let (updates, _, _) = await collect(options, frame: .xArbitraryZVertical, count: 3000)
        let late = updates.suffix(300)
        let mean = late.reduce(Vector3.zero) { $0 + Vector3($1.rotationRate.x, $1.rotationRate.y, $1.rotationRate.z) } / Double(late.count)
        #expect(mean.length < 0.002, "bias removed at rest: residual \(mean.length) rad/s")
    }
}
