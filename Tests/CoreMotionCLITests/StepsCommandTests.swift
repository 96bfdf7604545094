import Foundation
import Testing

/// `coremotion steps` and `coremotion bench steps` on walks of the Oxford Step Counter data set
/// (`../shared/data/steps`, CC BY 4.0) and on malformed input.
@Suite struct StepsCommandTests {
    static let data = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../../shared/data/steps").standardized

    static func truth(_ name: String) throws -> Int {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: data.appendingPathComponent("truth.json")))
        let entry = (json as? [String: Any])?[name] as? [String: Any]
        return try #require(entry?["steps"] as? Int)
    }

    @Test(arguments: ["Samsung_Dario_Hard_InHand_2", "Pixel_Jamie_Hard_NeckPouch_2", "Samsung_Carmelo_Hard_FrontPocket_2"])
    func countsARealWalkWithinThreePercent(name: String) async throws {
        let r = try await CLI.run(["steps", "--json", Self.data.appendingPathComponent(name + ".csv").path])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let steps = try #require(object["steps"] as? Int)
        let truth = try Self.truth(name)
        #expect(abs(Double(steps - truth)) <= 0.03 * Double(truth), "\(steps) of \(truth)")
        // Distance is the step-length model's: between 0.5 and 1 m a step for an adult walk.
        let distance = try #require(object["distance"] as? Double)
        #expect(distance > 0.5 * Double(steps) && distance < 1.0 * Double(steps))
        let cadence = try #require(object["cadence"] as? Double)
        #expect(cadence > 1.2 && cadence < 2.5)
    }

    @Test func malformedInputIsOneLineAndStatusOne() async throws {
        let path = NSTemporaryDirectory() + "steps-\(UUID().uuidString).csv"
        try "timestamp,sensor,x,y,z\n0,accelerometer,0,0,-1\n0.01,accelerometer,0,zero,-1\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try await CLI.run(["steps", path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(path):3:") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        let missing = try await CLI.run(["steps", path + ".absent"])
        #expect(missing.status == 1 && missing.stderr.contains("no such file or folder"), "\(missing.stderr)")
        let height = try await CLI.run(["steps", "--height", "1e300", path])
        #expect(height.status == 1)
    }

    @Test func benchStepsReportsInSampleAndCrossValidatedErrors() async throws {
        // Three walks of two users and two placements: enough for both cross-validations to have folds.
        let dir = NSTemporaryDirectory() + "bench-steps-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let names = ["Samsung_Dario_Hard_InHand_2", "Samsung_Carmelo_Hard_InHand_2", "Samsung_Dario_Hard_NeckPouch_2"]
        let all = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.data.appendingPathComponent("truth.json"))) as? [String: Any]
        var subset: [String: Any] = [:]
        for n in names {
            subset[n] = all?[n]
            try FileManager.default.createSymbolicLink(atPath: dir + "/" + n + ".csv",
                                                       withDestinationPath: Self.data.appendingPathComponent(n + ".csv").path)
        }
        try JSONSerialization.data(withJSONObject: subset).write(to: URL(fileURLWithPath: dir + "/truth.json"))
        let r = try await CLI.run(["bench", "steps", dir, "--json"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(report["count"] as? Int == 3)
        let walks = try #require(report["walks"] as? [String: [String: Any]])
        #expect(Set(walks.keys) == Set(names))
        for (name, w) in walks {
            let truth = try Self.truth(name)
            #expect(w["truth"] as? Int == truth)
            let steps = try #require(w["steps"] as? Int)
            #expect(abs(Double(steps - truth)) <= 0.03 * Double(truth))
            #expect(w["stepsLeaveOneUserOut"] is Int && w["stepsLeaveOnePlacementOut"] is Int)
        }
        let mape = try #require(report["mapeInSample"] as? Double)
        #expect(mape >= 0 && mape < 0.03)
        #expect((report["mapeLeaveOneUserOut"] as? Double).map { $0 >= 0 && $0 < 0.1 } == true)
    }

    @Test func benchStepsNeedsTruth() async throws {
        let r = try await CLI.run(["bench", "steps", NSTemporaryDirectory() + "no-such-dir-\(UUID().uuidString)"])
        #expect(r.status == 1 && r.stderr.contains("truth.json"))
    }
}
