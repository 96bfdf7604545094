import Foundation
import MotionFusion
import MotionSources

/// The platform a phyphox phone runs, which fixes the factor its acceleration was scaled by.
package enum PhyphoxPlatform: String, Sendable, Hashable {
    /// iOS: phyphox multiplies Core Motion's g by −9.81 (`kG` in `ExperimentSensorInput.swift`).
    case iOS = "ios"
    /// Android: the sensor's own m/s² with Android's sign; g taken as 9.80665.
    case android = "android"

    /// The m/s² per g to divide by.
    package var gravity: Double { self == .iOS ? PhoneUnits.phyphoxGravity : PhoneUnits.standardGravity }

    /// The platform `meta/device.csv` of an export names (`deviceBrand` Apple: iOS; another brand:
    /// Android), `nil` when it names none.
    package static func from(deviceBrand brand: String?) -> PhyphoxPlatform? {
        guard let brand, !brand.isEmpty else { return nil }
        return brand.lowercased() == "apple" ? .iOS : .android
    }

    /// The Core Motion value of a reading of `sensor` as phyphox gives it, live (`/get`) or exported:
    /// acceleration (m/s², Android's sign on both platforms) negated and divided by the platform's
    /// ``gravity`` (phyphox's 9.81 when the platform is unknown); rotation rate (rad/s) and magnetic
    /// field (µT) unchanged.
    package static func value(_ sensor: SensorKind, _ x: Double, _ y: Double, _ z: Double, platform: PhyphoxPlatform?) -> Vector3 {
        guard sensor == .accelerometer else { return Vector3(x, y, z) }
        return PhoneUnits.androidAcceleration(x, y, z, gravity: platform?.gravity ?? PhoneUnits.phyphoxGravity)
    }

    /// The platform a `/meta` document reveals: an Apple device name or brand means iOS, anything else
    /// (or no document) Android.
    package static func from(meta bytes: [UInt8]) -> PhyphoxPlatform {
        let text = String(decoding: bytes.prefix(64 * 1024), as: UTF8.self).lowercased()
        return text.contains("apple") || text.contains("iphone") || text.contains("ipad") || text.contains("ios") ? .iOS : .android
    }
}

