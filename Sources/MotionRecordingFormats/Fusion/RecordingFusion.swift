import MotionFusion
import MotionSources

/// Fuses a recording into device motion: the engine of `coremotion fuse`, the same code as live
/// device motion (MotionFusion's ``FusionDriver`` and ``ReferenceFrameProjection``, which
/// OpenCoreMotion's hub runs on a source's samples).
///
/// ## Rows
/// Input is the merged stream of the recording (``SampleMerge``). One row per fused update: per
/// gyroscope sample the driver accepts once an accelerometer sample has been accepted, stamped with
/// that gyroscope sample's timestamp. No row precedes the first accelerometer and gyroscope samples.
/// ``Options/offline`` writes exactly the same rows (same count, same timestamps), with the attitude
/// of ``AttitudeSmoother`` (past and future samples) instead of the causal filter's.
///
/// ## Checks before the first row
/// The first ``lookahead`` merged samples are read before anything is written: a recording with no
/// accelerometer or no gyroscope sample there, when it ends there, or with no magnetometer sample
/// there when the frame needs one, is an error and nothing is written. Memory: those samples, the
/// merge's window and, offline only, a few values per row.
package enum RecordingFusion {
    /// Samples read ahead to check the recording's sensors before the first row.
    package static let lookahead = 50_000

    /// What to compute.
    package struct Options: Sendable {
        /// The reference frame of the attitude and heading.
        package var frame: AttitudeReferenceFrame
        /// 9D (the magnetometer corrects the heading) or 6D.
        package var usesMagnetometer: Bool
        /// Smooth with past and future samples (``AttitudeSmoother``) instead of the causal filter.
        package var offline: Bool
        /// Filter tuning; `nil` for the default of the mode (``AttitudeSmoother/defaultParameters`` offline).
        package var parameters: AttitudeFilterParameters?
        /// When the recording turns out to have no magnetometer, fuse 6D in `xArbitraryZVertical` instead of
        /// failing (for a frame the user did not choose). Default `false`.
        package var fallsBackWithoutMagnetometer = false
        /// The grade of a stored magnetometer calibration already applied to the samples, which the filter
        /// starts from (``FusionDriver/priorMagneticAccuracy``). Default: none.
        package var priorMagneticAccuracy: MagneticCalibrationAccuracy = .uncalibrated

        /// Creates options; `usesMagnetometer` defaults to what `frame` needs.
        package init(frame: AttitudeReferenceFrame, usesMagnetometer: Bool? = nil, offline: Bool = false,
                    parameters: AttitudeFilterParameters? = nil) {
            self.frame = frame
            self.usesMagnetometer = usesMagnetometer ?? frame.usesMagnetometer
            self.offline = offline
            self.parameters = parameters
        }
    }

    /// What a run read and wrote.
    package struct Summary: Sendable, Hashable {
        /// Merged samples read, per sensor.
        package var accelerometer = 0, gyro = 0, magnetometer = 0
        /// Rows written.
        package var rows = 0
        /// The recording had no magnetometer and ``Options/fallsBackWithoutMagnetometer`` made the run 6D in
        /// `xArbitraryZVertical`.
        package var fellBackWithoutMagnetometer = false
    }

    /// Fuses `input` and hands each row to `write`, in order.
    /// - Parameters:
    ///   - input: the merged recording.
    ///   - name: the recording's name for errors that concern it as a whole.
    ///   - options: frame, mode and tuning.
    ///   - progress: called about every 65 536 samples with the number read so far.
    ///   - write: receives each row.
    /// - Returns: what was read and written.
    /// - Throws: the input's ``RecordingError`` after every row before it was written, or one for a
    ///   recording without the sensors the options need (then before any row).
    @discardableResult
    package static func run(_ input: inout SampleMerge, name: String, options: Options,
                           progress: (Int) -> Void = { _ in },
                           write: (FusedMotion) throws(RecordingError) -> Void) throws(RecordingError) -> Summary {
        var options = options
        var fellBack = false
        // Read ahead to check the sensors.
        var ahead: [RawSample] = []
        ahead.reserveCapacity(1024)
        var ended = false
        var has = (acc: false, gyro: false, mag: false)
        let needsMagnetometer = options.usesMagnetometer
        var pending: RecordingError?
        while ahead.count < lookahead {
            let next: RecordedSample?
            do { next = try input.next() } catch { pending = error; break }
            guard let s = next else { ended = true; break }
            ahead.append(s.sample)
            switch s.sample.sensor {
            case .accelerometer: has.acc = true
            case .gyro: has.gyro = true
            case .magnetometer: has.mag = true
            case .pressure: break
            }
            if has.acc && has.gyro && (has.mag || !needsMagnetometer) { break }
        }
        // Conclusive only when the recording ended or the budget ran out; an error first lets the
        // good rows before it be written.
        if ended || ahead.count >= lookahead {
            let scope = ended ? "the recording has" : "the first \(lookahead) samples have"
            var missing: [String] = []
            if !has.acc { missing.append("accelerometer") }
            if !has.gyro { missing.append("gyroscope") }
            if !missing.isEmpty {
                throw RecordingError("\(scope) no \(missing.joined(separator: " or ")) samples: device motion needs an accelerometer and a gyroscope", path: name)
            }
            if needsMagnetometer && !has.mag && options.fallsBackWithoutMagnetometer {
                options.frame = .arbitrary
                options.usesMagnetometer = false
                fellBack = true
            } else if needsMagnetometer && !has.mag {
                throw RecordingError("\(scope) no magnetometer samples, which the reference frame \(options.frame.name) needs: use --no-magnetometer or --reference-frame xArbitraryZVertical", path: name)
            }
        }
        if let pending, ahead.isEmpty { throw pending }

        var summary = Summary()
        summary.fellBackWithoutMagnetometer = fellBack
        let parameters = options.parameters ?? (options.offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters())
        var driver = FusionDriver(parameters: parameters, usesMagnetometer: options.usesMagnetometer)
        driver.priorMagneticAccuracy = options.priorMagneticAccuracy
        var projection = ReferenceFrameProjection(options.frame)
        var offline = options.offline ? OfflineRows() : nil
        var read = 0

        func feed(_ sample: RawSample) throws(RecordingError) {
            switch sample.sensor {
            case .accelerometer: summary.accelerometer += 1
            case .gyro: summary.gyro += 1
            case .magnetometer: summary.magnetometer += 1
            case .pressure: return  // not fused
            }
            read += 1
            if read & 0xFFFF == 0 { progress(read) }
            guard driver.update(sample) else {
                if offline != nil { offline!.hold(sample) }
                return
            }
            if offline != nil {
                offline!.hold(sample)
                offline!.append(sample.timestamp, driver.estimate)
            } else {
                try write(projection.motion(driver.estimate, timestamp: sample.timestamp))
            }
            summary.rows += 1
        }

        for s in ahead { try feed(s) }
        ahead = []
        if let pending { throw pending }
        while let s = try input.next() { try feed(s.sample) }
        progress(read)

        if summary.gyro == 0 || summary.accelerometer == 0 {
            var missing: [String] = []
            if summary.accelerometer == 0 { missing.append("accelerometer") }
            if summary.gyro == 0 { missing.append("gyroscope") }
            throw RecordingError("the recording has no \(missing.joined(separator: " or ")) samples: device motion needs an accelerometer and a gyroscope", path: name)
        }
        if let rows = offline {
            try rows.smooth(parameters: parameters, usesMagnetometer: options.usesMagnetometer,
                            projection: &projection, write: write)
        }
        return summary
    }
}

/// What offline fusion keeps per row: the inputs at each fused update (the gyroscope sample and the
/// latest accelerometer and magnetometer samples, held; rows before the first magnetometer sample take
/// that sample) and the causal filter's magnetic field.
struct OfflineRows {
    var timestamps: [Double] = []
    var gyro: [Vector3] = []
    var accelerometer: [Vector3] = []
    var magnetometer: [Vector3] = []
    var field: [Vector3] = []
    var accuracy: [MagneticCalibrationAccuracy] = []
    var latestAccelerometer = Vector3(0, 0, -1)
    var latestMagnetometer = Vector3.zero
    var latestGyro = Vector3.zero

    var hasMagnetometer = false

    mutating func hold(_ s: RawSample) {
        guard s.value.isFinite else { return }
        switch s.sensor {
        case .accelerometer: latestAccelerometer = s.value
        case .magnetometer:
            latestMagnetometer = s.value
            if !hasMagnetometer {
                // Rows before the first magnetometer sample take its value rather than a zero field.
                hasMagnetometer = true
                for i in magnetometer.indices { magnetometer[i] = s.value }
            }
        case .gyro: latestGyro = s.value
        case .pressure: break
        }
    }

    mutating func append(_ t: Double, _ e: AttitudeEstimate) {
        timestamps.append(t)
        gyro.append(latestGyro)
        accelerometer.append(latestAccelerometer)
        magnetometer.append(latestMagnetometer)
        field.append(e.magneticField)
        accuracy.append(e.magneticFieldAccuracy)
    }

    func smooth(parameters: AttitudeFilterParameters, usesMagnetometer: Bool,
                projection: inout ReferenceFrameProjection,
                write: (FusedMotion) throws(RecordingError) -> Void) throws(RecordingError) {
        guard !timestamps.isEmpty else { return }
        let ts = timestamps
        let nominal = parameters.nominalTimeStep
        let s = AttitudeSmoother.smoothWithBias(
            gyro: gyro, accelerometer: accelerometer, magnetometer: usesMagnetometer ? magnetometer : nil,
            parameters: parameters, timeStep: { i in i == 0 ? nominal : ts[i] - ts[i - 1] })
        let hasField = projection.frame != .arbitrary
        for i in timestamps.indices {
            let q = s.attitude[i]
            let (attitude, heading) = projection.express(q, isNorthReferenced: usesMagnetometer)
            let gravity = q.inverseRotate(Vector3(0, 0, -1))
            try write(FusedMotion(
                timestamp: timestamps[i], attitude: attitude, gravity: gravity,
                userAcceleration: accelerometer[i] - gravity, rotationRate: gyro[i] - s.bias[i],
                magneticField: hasField ? field[i] : .zero,
                magneticFieldAccuracy: hasField ? accuracy[i] : .uncalibrated, heading: heading))
        }
    }
}
