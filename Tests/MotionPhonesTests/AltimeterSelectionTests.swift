import Foundation
import MotionSources
import Testing
@testable import MotionPhones
@testable import OpenCoreMotion

@Suite struct PhoneAltimeterSelectionTests {
    @Test func phoneSpecsNameABarometerSharingTheSource() throws {
        let spec = "phyphox://127.0.0.1:9?silence=2"
        let barometer = try #require(AltimeterSelection.barometer(named: spec) as? PhoneBarometer)
        // The same spec gives the same source, so the motion manager and the altimeter share one connection.
        #expect(barometer.source === (try PhoneSource.shared(spec: spec)))
        #expect(barometer.source.silence == 2)
        #expect(AltimeterSelection.barometer(named: "hyperimu://0.0.0.0:9") == nil, "HyperIMU sends no pressure")
        #expect(AltimeterSelection.barometer(named: "phyphox://nohostport") == nil)
        // Nothing received yet: no reading, no error (the altimeter waits).
        let silent = PhoneBarometer(source: try PhoneSource(spec: PhoneSpec(parsing: "sensorlogger://127.0.0.1:0"), log: { _ in }))
        #expect(try silent.readPressure(at: 0).isNaN)
    }
}
