import MotionFusion

extension CMMagneticFieldCalibrationAccuracy {
    init(_ a: MagneticCalibrationAccuracy) {
        self = CMMagneticFieldCalibrationAccuracy(rawValue: Int32(a.rawValue)) ?? .uncalibrated
    }
}
