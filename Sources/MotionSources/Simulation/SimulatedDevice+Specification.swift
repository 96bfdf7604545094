extension SimulatedDevice {
    /// Creates a device from a source specification such as `COREMOTION_SOURCE` holds: `sim`
    /// (the handheld scenario), `sim:<scenario>` or `sim:<scenario>:<seed>`, for example
    /// `sim:walk` or `sim:shake:7`. Scenario names are ``SimulationScenario`` raw values.
    ///
    /// - Returns: `nil` when `specification` is not of that form (unknown scenario, bad seed).
    public convenience init?(specification: String, clock: Clock = .realTime) {
        let parts = specification.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.first == "sim", parts.count <= 3 else { return nil }
        var scenario = SimulationScenario.handheld
        var seed: UInt64 = 1
        if parts.count >= 2 {
            guard let s = SimulationScenario(rawValue: String(parts[1])) else { return nil }
            scenario = s
        }
        if parts.count == 3 {
            guard let s = UInt64(parts[2]) else { return nil }
            seed = s
        }
        self.init(scenario: scenario, seed: seed, clock: clock)
    }
}
