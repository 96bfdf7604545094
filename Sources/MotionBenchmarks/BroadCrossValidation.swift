import MotionFusion

/// One of the four ways BROAD scores an orientation filter here: causal or offline, with or without the
/// magnetometer. 9D estimates are judged on the total error, 6D ones on the inclination (heading is
/// unobservable without a magnetometer).
package enum BroadMeasure: String, CaseIterable, Sendable, Codable {
    /// ``AttitudeFilter`` with the magnetometer, total error.
    case causal9D = "causal_9d_total"
    /// ``AttitudeFilter`` without the magnetometer, inclination error.
    case causal6D = "causal_6d_inclination"
    /// ``AttitudeSmoother`` with the magnetometer, total error.
    case offline9D = "offline_9d_total"
    /// ``AttitudeSmoother`` without the magnetometer, inclination error.
    case offline6D = "offline_6d_inclination"

    /// Whether the measure runs the offline smoother.
    package var offline: Bool { self == .offline9D || self == .offline6D }
    /// Whether the measure fuses the magnetometer.
    package var usesMagnetometer: Bool { self == .causal9D || self == .offline9D }
    /// The parameters the measure starts from: ``AttitudeFilterParameters``' defaults, or
    /// ``AttitudeSmoother/defaultParameters`` offline.
    package var baseParameters: AttitudeFilterParameters {
        offline ? AttitudeSmoother.defaultParameters : AttitudeFilterParameters()
    }
    /// The figure of `errors` this measure scores, degrees.
    package func figure(_ errors: BroadErrors) -> Double {
        usesMagnetometer ? errors.total : errors.inclination
    }
}

/// Leave-one-trial-out cross-validation of the choice of filter parameters on BROAD trials.
///
/// For every candidate parameter set (the Cartesian product of a grid of named parameter values applied
/// to the measure's base parameters) every trial is scored once. Then, for each trial in turn, the
/// candidate with the lowest mean figure over the *other* trials is chosen and the held-out trial is
/// scored with it: the mean of those held-out figures estimates how the tuning procedure does on trials
/// it has not seen (M. Stone, "Cross-validatory choice and assessment of statistical predictions",
/// J. R. Stat. Soc. B 36(2), 1974). With an empty grid the procedure has nothing to choose and the
/// cross-validated figures equal the in-sample ones.
///
/// Values only; runs on the calling thread.
package struct BroadCrossValidation: Sendable {
    /// One grid axis: a parameter name (see ``AttitudeFilterParameters/numericKeyPaths``) and its values.
    package struct Axis: Sendable, Hashable, Codable {
        /// Parameter name.
        package var name: String
        /// Candidate values, in the parameter's unit.
        package var values: [Double]
        /// Creates an axis.
        package init(name: String, values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    /// The outcome for one measure.
    package struct MeasureResult: Sendable, Codable {
        /// The measure.
        package var measure: BroadMeasure
        /// Per trial: the figure with the default parameters (in-sample), degrees.
        package var inSample: [String: Double]
        /// Per trial: the figure with the candidate chosen on the other trials, degrees.
        package var crossValidated: [String: Double]
        /// Per trial: the overrides (`name=value`) chosen on the other trials.
        package var chosen: [String: [String]]
        /// Mean of ``inSample``, degrees.
        package var inSampleMean: Double
        /// Mean of ``crossValidated``, degrees.
        package var crossValidatedMean: Double
        /// The candidate with the best mean over all trials (what tuning on every trial would pick) and
        /// that mean, degrees.
        package var bestOnAll: [String]
        /// See ``bestOnAll``.
        package var bestOnAllMean: Double

        enum CodingKeys: String, CodingKey {
            case measure, chosen
            case inSample = "in_sample"
            case crossValidated = "cross_validated"
            case inSampleMean = "in_sample_mean"
            case crossValidatedMean = "cross_validated_mean"
            case bestOnAll = "best_on_all"
            case bestOnAllMean = "best_on_all_mean"
        }
    }

    /// The grid.
    package var axes: [Axis]

    /// The parameters whose defaults were chosen on the BROAD trials, with values around them: the
    /// rotation rate that shortens the causal inclination time constant
    /// (``MotionFusion/AttitudeFilterParameters/inclinationRateScale``, default 300 °/s; its `τ₀`, 1.75 s,
    /// is held: longer values moved gravity away from Apple's on a hand-held iPhone, which BROAD does not
    /// see), offline the inclination time constant (1.75 s), the gravity smoother's time constant (2 s),
    /// and for offline 9D the heading smoother's time constant (30 s), rest variance ratio (0.001) and
    /// disturbance angle (0.5°).
    package static let defaultAxes: [BroadMeasure: [Axis]] = {
        let rate = Axis(name: "inclinationRateScale", values: [0, 200, 300, 400])
        let offlineTau = Axis(name: "accelerometerTimeConstant", values: [1.75, 2.2, 3])
        let smoother = Axis(name: "smootherZeroPhaseTimeConstant", values: [1.5, 2, 3])
        let heading = [Axis(name: "smootherHeadingTimeConstant", values: [20, 30, 60]),
                       Axis(name: "smootherHeadingRestVarianceRatio", values: [0.0001, 0.001, 0.01]),
                       Axis(name: "smootherHeadingDisturbanceAngle", values: [0.25, 0.5, 1])]
        return [.causal9D: [rate], .causal6D: [rate], .offline9D: [offlineTau, smoother] + heading,
                .offline6D: [offlineTau, smoother]]
    }()

    /// Creates a cross-validation over `axes`.
    package init(axes: [Axis]) {
        self.axes = axes
    }

    /// The candidates: every combination of the axes' values, as override lists.
    package var candidates: [[String]] {
        var out: [[String]] = [[]]
        for axis in axes {
            out = out.flatMap { prefix in axis.values.map { prefix + ["\(axis.name)=\($0)"] } }
        }
        return out
    }

    /// Runs the cross-validation of one measure.
    /// - Throws: ``BroadError`` for a bad override or an estimate of the wrong length.
    package func run(_ measure: BroadMeasure, trials: [BroadTrial],
                    progress: (String) -> Void = { _ in }) throws -> MeasureResult {
        let names = trials.map(\.name)
        func scores(_ overrides: [String]) throws -> [Double] {
            var p = measure.baseParameters
            for o in overrides where !p.apply(override: o) { throw BroadError.badOverride(o) }
            let runner = BroadRunner(parameters: p, usesMagnetometer: measure.usesMagnetometer, offline: measure.offline)
            return try trials.map { measure.figure(try runner.score($0)) }
        }
        let defaults = try scores([])
        let cands = candidates
        var table: [[Double]] = []
        for c in cands {
            progress("\(measure.rawValue) \(c.joined(separator: " "))")
            table.append(c.isEmpty ? defaults : try scores(c))
        }
        var cv: [String: Double] = [:], chosen: [String: [String]] = [:]
        for (k, name) in names.enumerated() {
            var best = 0, bestMean = Double.infinity
            for (g, row) in table.enumerated() {
                var s = 0.0
                for (j, v) in row.enumerated() where j != k { s += v }
                if s < bestMean { bestMean = s; best = g }
            }
            cv[name] = table[best][k]
            chosen[name] = cands[best]
        }
        let means = table.map { $0.reduce(0, +) / Double(max($0.count, 1)) }
        let bestAll = means.indices.min { means[$0] < means[$1] } ?? 0
        let n = Double(max(names.count, 1))
        return MeasureResult(
            measure: measure,
            inSample: Dictionary(uniqueKeysWithValues: zip(names, defaults)),
            crossValidated: cv, chosen: chosen,
            inSampleMean: defaults.reduce(0, +) / n,
            crossValidatedMean: cv.values.reduce(0, +) / n,
            bestOnAll: cands[bestAll], bestOnAllMean: means[bestAll]
        )
    }
}
