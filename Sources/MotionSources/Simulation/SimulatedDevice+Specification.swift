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

extension SourceProvider {
    /// The simulator's family: `sim`, `sim:SCENARIO[:SEED]` (``SimulatedDevice/init(specification:clock:)``,
    /// in real time), and its barometers `sim[:BAROMETER_SCENARIO[:SEED]]` (``BarometerScenario``, still
    /// by default). It finds no device by itself: the simulator is used only when named.
    package static let simulator = SourceProvider(
        schemes: SourceSchemes.simulator,
        usage: "sim[:SCENARIO[:SEED]]",
        makeSource: { spec, _ throws(SourceError) in
            guard let device = SimulatedDevice(specification: spec) else {
                let scenarios = SimulationScenario.allCases.map(\.rawValue).joined(separator: ", ")
                throw SourceError(.unavailable, "unknown simulator '\(spec)'; expected sim:SCENARIO[:SEED] with SCENARIO one of \(scenarios)")
            }
            return device
        },
        makeBarometer: { spec, _ in
            let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let scenario = parts.count > 1 ? BarometerScenario(rawValue: parts[1]) : .still
            let seed = parts.count > 2 ? UInt64(parts[2]) : 1
            guard let scenario, let seed else { return nil }
            return SimulatedBarometerSource(scenario: scenario, seed: seed)
        }
    )
}
