import MotionFusion

/// Runs ``AttitudeFilter`` or ``AttitudeSmoother`` over recordings for `coremotion fuse`.
public enum FuseEngine {
    /// Fuses a BROAD trial (uniform rate), one output row per sample.
    public static func fuse(_ trial: BroadTrial, magnetometer: Bool, offline: Bool, frame: FuseReferenceFrame,
                            parameters: AttitudeFilterParameters? = nil,
                            into w: inout FuseWriter) throws {
        let parameters = parameters ?? (offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters())
        let dt = trial.timeStep
        var bar = ProgressBar(total: trial.count)
        if offline {
            let s = AttitudeSmoother.smoothWithBias(
                gyro: trial.gyro, accelerometer: trial.accelerometer,
                magnetometer: magnetometer ? trial.magnetometer : nil, parameters: parameters, timeStep: { _ in dt })
            for i in 0..<trial.count {
                try w.row(t: Double(i) * dt, attitude: frame.attitude(fromNorthOrArbitrary: s.attitude[i]),
                          acceleration: trial.accelerometer[i], rotationRate: trial.gyro[i] - s.bias[i],
                          northReferenced: magnetometer && frame.isNorthReferenced, frame: frame)
                bar.update(i + 1)
            }
            return
        }
        var f = AttitudeFilter(parameters: parameters, usesMagnetometer: magnetometer)
        for i in 0..<trial.count {
            f.update(gyro: trial.gyro[i], accelerometer: trial.accelerometer[i],
                     magnetometer: magnetometer ? trial.magnetometer[i] : nil, dt: dt)
            let e = f.estimate
            try w.row(t: Double(i) * dt, attitude: frame.attitude(e), acceleration: trial.accelerometer[i],
                      rotationRate: e.rotationRate, northReferenced: e.isMagneticNorthReferenced && frame.isNorthReferenced, frame: frame)
            bar.update(i + 1)
        }
    }

    /// Fuses an interleaved raw recording, one output row per valid input row.
    ///
    /// Causal mode feeds each sensor with the time step since that sensor's previous sample (rows whose
    /// timestamp does not increase are skipped by the filter). Offline mode holds the latest value of each
    /// sensor, merges rows with equal timestamps into one sample, and smooths the merged stream with the
    /// time between distinct timestamps; rows older than their predecessor are dropped.
    public static func fuse(_ rec: SensorRecording, magnetometer: Bool, offline: Bool, frame: FuseReferenceFrame,
                            parameters: AttitudeFilterParameters? = nil,
                            into w: inout FuseWriter) throws {
        let parameters = parameters ?? (offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters())
        var bar = ProgressBar(total: rec.rows.count)
        let north = magnetometer && frame.isNorthReferenced
        if offline {
            var gyro: [Vector3] = [], acc: [Vector3] = [], mag: [Vector3] = [], dts: [Double] = []
            var rowsUsed: [(t: Double, merged: Int)] = []
            var g = Vector3.zero, a = Vector3(0, 0, -1), m = Vector3.zero
            var last: Double? = nil
            for r in rec.rows where r.value.isFinite && r.timestamp.isFinite {
                if let l = last, r.timestamp < l { continue } // stale: skipped
                switch r.sensor {
                case .gyro: g = r.value
                case .accelerometer: a = r.value
                case .magnetometer: m = r.value
                }
                if let l = last, r.timestamp == l {
                    // Same instant as the previous row: merge into that sample.
                    gyro[gyro.count - 1] = g; acc[acc.count - 1] = a; mag[mag.count - 1] = m
                } else {
                    dts.append(last.map { r.timestamp - $0 } ?? parameters.nominalTimeStep)
                    gyro.append(g); acc.append(a); mag.append(m)
                    last = r.timestamp
                }
                rowsUsed.append((r.timestamp, gyro.count - 1))
            }
            let s = AttitudeSmoother.smoothWithBias(gyro: gyro, accelerometer: acc, magnetometer: magnetometer ? mag : nil,
                                                    parameters: parameters, timeStep: { dts[$0] })
            for (k, row) in rowsUsed.enumerated() {
                let i = row.merged
                try w.row(t: row.t, attitude: frame.attitude(fromNorthOrArbitrary: s.attitude[i]), acceleration: acc[i],
                          rotationRate: gyro[i] - s.bias[i], northReferenced: north, frame: frame)
                bar.update(k + 1)
            }
            return
        }
        var f = AttitudeFilter(parameters: parameters, usesMagnetometer: magnetometer)
        var lastT: [SensorRecording.Sensor: Double] = [:]
        for (i, r) in rec.rows.enumerated() {
            let dt = lastT[r.sensor].map { r.timestamp - $0 } ?? parameters.nominalTimeStep
            if dt > 0 { lastT[r.sensor] = r.timestamp }
            switch r.sensor {
            case .gyro: f.updateGyro(r.value, dt: dt)
            case .accelerometer: f.updateAccelerometer(r.value, dt: dt)
            case .magnetometer: f.updateMagnetometer(r.value, dt: dt)
            }
            let e = f.estimate
            try w.row(t: r.timestamp, attitude: frame.attitude(e), acceleration: f.state.lastAcceleration,
                      rotationRate: e.rotationRate, northReferenced: north && e.isMagneticNorthReferenced, frame: frame)
            bar.update(i + 1)
        }
    }
}
