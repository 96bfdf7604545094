import Foundation
import Testing

/// `bench soak` end to end, briefly: its JSON says what the README says it does.
@Suite struct BenchSoakTests {
    @Test func aShortSoakCountsEveryUpdateAndReportsMemory() throws {
        let r = try CLI.run(["bench", "soak", "--rate", "200", "--seconds", "4", "--json"], timeout: 30)
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let expected = try #require(object["expected"] as? Int)
        #expect(expected > 600 && expected < 900, "about 200 Hz for 4 s: \(expected)")
        #expect(object["delivered"] as? Int == expected)
        #expect(object["lost"] as? Int == 0)
        let rss = try #require(object["rss_kb"] as? [String: Int])
        #expect((rss["start"] ?? 0) > 1000, "RSS read from /proc/self/statm")
        #expect(object["growth_kb"] as? Int == (rss["end"] ?? 0) - (rss["after_warmup"] ?? 0))
    }
}
