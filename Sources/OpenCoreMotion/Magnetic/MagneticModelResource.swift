import Foundation
import MotionFusion

// Resources/WMM2025.COF: World Magnetic Model 2025 coefficients by NOAA NCEI and BGS, public domain, copied
// unchanged from shared/data/wmm/WMM2025.COF (from the PyPI package magvar 1.1, which redistributes NOAA's file).

/// Magnetic declination from the World Magnetic Model 2025 shipped with OpenCoreMotion
/// (`Resources/WMM2025.COF`, NOAA NCEI / BGS, public domain).
///
/// Thread-safe: the model is loaded once, lazily, and then only read.
public enum MagneticModelResource {
    /// Errors loading the model.
    public enum LoadError: Error, Sendable {
        /// The bundled coefficient file is missing or malformed.
        case modelUnavailable
    }

    /// The bundled WMM2025 model, or `nil` if the resource cannot be read.
    public static let worldMagneticModel2025: WorldMagneticModel? = {
        guard let url = Bundle.module.url(forResource: "WMM2025", withExtension: "COF"),
              let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return WorldMagneticModel(cof: String(decoding: data, as: UTF8.self))
    }()

    /// The decimal year of a date (UTC), e.g. 2026.5 in early July 2026.
    public static func decimalYear(_ date: Date) -> Double {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        let year = cal.component(.year, from: date)
        let start = cal.date(from: DateComponents(year: year, month: 1, day: 1))!
        let end = cal.date(from: DateComponents(year: year + 1, month: 1, day: 1))!
        return Double(year) + date.timeIntervalSince(start) / end.timeIntervalSince(start)
    }

    /// Declination in degrees (positive east) at a location and date from WMM2025, or `nil` when the
    /// bundled model cannot be read.
    public static func declinationDegrees(latitude: Double, longitude: Double, height: Double = 0, date: Date = Date()) -> Double? {
        worldMagneticModel2025?.field(latitude: latitude, longitude: longitude, height: height, year: decimalYear(date)).declination
    }

    /// Declination in radians (positive east) at a location and date, from WMM2025.
    /// - Parameters:
    ///   - latitude: geodetic latitude, degrees.
    ///   - longitude: longitude, degrees east.
    ///   - height: height above the WGS-84 ellipsoid, km. Default 0.
    ///   - date: the date. Default now.
    /// - Throws: ``LoadError/modelUnavailable`` when the bundled model cannot be read.
    public static func declination(latitude: Double, longitude: Double, height: Double = 0, date: Date = Date()) throws -> Double {
        guard let model = worldMagneticModel2025 else { throw LoadError.modelUnavailable }
        return model.field(latitude: latitude, longitude: longitude, height: height, year: decimalYear(date))
            .declination * Double.pi / 180
    }
}
