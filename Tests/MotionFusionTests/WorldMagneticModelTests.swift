import MotionFusion
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// WMM evaluation against NOAA's official WMM2020 test values (`shared/data/wmm`).
@Suite struct WorldMagneticModelTests {
    static let directory: String = {
        var url = #filePath
        for _ in 0..<3 { url = String(url[..<url.lastIndex(of: "/")!]) }
        return url + "/../shared/data/wmm/"
    }()

    static func read(_ name: String) -> String? {
        guard let f = fopen(directory + name, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: buf[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func matchesTheOfficialWMM2020TestValues() throws {
        let cof = try #require(Self.read("WMM2020.COF"))
        let model = try #require(WorldMagneticModel(cof: cof))
        #expect(model.epoch == 2020 && model.maximumDegree == 12)
        let values = try #require(Self.read("WMM2020_TEST_VALUES.txt"))
        var checked = 0
        for line in values.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let f = line.split(separator: " ").compactMap { Double($0) }
            guard f.count >= 11 else { continue }
            let field = model.field(latitude: f[2], longitude: f[3], height: f[1], year: f[0])
            // The official values are rounded to 0.01° and 0.1 nT.
            #expect(abs(field.declination - f[4]) < 0.011)
            #expect(abs(field.inclination - f[5]) < 0.011)
            #expect(abs(field.horizontal - f[6]) < 0.2)
            #expect(abs(field.north - f[7]) < 0.2)
            #expect(abs(field.east - f[8]) < 0.2)
            #expect(abs(field.down - f[9]) < 0.2)
            #expect(abs(field.total - f[10]) < 0.2)
            checked += 1
        }
        #expect(checked >= 12)
    }

    @Test func parsesWMM2025AndRejectsGarbage() throws {
        let cof = try #require(Self.read("WMM2025.COF"))
        let model = try #require(WorldMagneticModel(cof: cof))
        #expect(model.epoch == 2025 && model.name == "WMM-2025")
        // Berlin, 2026: declination a few degrees east, dip about 68°.
        let f = model.field(latitude: 52.5, longitude: 13.4, year: 2026.0)
        #expect(f.declination > 3 && f.declination < 8)
        #expect(f.inclination > 66 && f.inclination < 70)
        #expect(WorldMagneticModel(cof: "not a model") == nil)
        #expect(WorldMagneticModel(cof: "") == nil)
    }
}
