extension AttitudeFilter {
    /// Prepares the filter to process the same recording backwards in time.
    ///
    /// Feeding samples in reverse order with the gyro negated integrates the attitude backwards; the bias
    /// (and every state derived from the gyro) changes sign under that transformation, so it is negated
    /// here. Calling it twice restores the forward direction. Used by ``AttitudeSmoother``.
    public mutating func reverseTimeDirection() {
        state.bias = -state.bias
        state.lastGyro = -state.lastGyro
        state.restGyroLowPass = -state.restGyroLowPass
        state.rotatedBiasLowPass.s1 = -state.rotatedBiasLowPass.s1
        state.rotatedBiasLowPass.s2 = -state.rotatedBiasLowPass.s2
        state.rotatedBiasLowPass.value = -state.rotatedBiasLowPass.value
        state.headingBiasLowPass = -state.headingBiasLowPass
        state.calibrator.reverseTimeDirection()
        state.lastTimestamp = nil
    }
}
