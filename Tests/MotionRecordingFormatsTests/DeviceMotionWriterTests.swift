import Foundation
import MotionFusion
import MotionRecordingFormats
import Testing

@Suite struct DeviceMotionWriterTests {
    @Test func numbersAreShortLocaleFreeAndAccurateToTheNinthDecimal() {
        #expect(NumberFormatting.string(0.5) == "0.5")
        #expect(NumberFormatting.string(-1) == "-1")
        #expect(NumberFormatting.string(0) == "0")
        #expect(NumberFormatting.string(-0.0) == "0")
        #expect(NumberFormatting.string(123.000000001) == "123.000000001")
        #expect(NumberFormatting.string(-0.0000000004) == "0")
        #expect(NumberFormatting.string(1e20) == "1e+20")
        #expect(NumberFormatting.string(.nan) == "nan")
        #expect(NumberFormatting.string(12345.678, maximumDecimals: 1) == "12345.7")
        var state: UInt64 = 42
        for _ in 0..<20_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let v = (Double(state >> 11) / Double(1 << 53) - 0.5) * pow(10, Double(Int(state % 14)) - 4)
            let text = NumberFormatting.string(v)
            let back = Double(text)!
            #expect(abs(back - v) <= 5.000001e-10 + abs(v) * 1e-15, "\(v) → \(text)")
        }
    }

    func sample() -> FusedMotion {
        FusedMotion(timestamp: 1234.5, attitude: Quaternion(eulerAngles: EulerAngles(roll: 0.1, pitch: 0.2, yaw: 0.3)),
                    gravity: Vector3(0.1, -0.2, -0.97), userAcceleration: Vector3(0.01, 0, 0),
                    rotationRate: Vector3(0.5, -0.25, 0), magneticField: Vector3(20, -3, 40),
                    magneticFieldAccuracy: .medium, heading: 42.5)
    }

    @Test func csvHeaderNamesAreTheJSONLKeysAndBothCarryTheSameValues() throws {
        var csv: [UInt8] = [], jsonl: [UInt8] = []
        var w1 = DeviceMotionWriter(format: .csv) { (b: inout [UInt8]) in csv += b; b.removeAll() }
        var w2 = DeviceMotionWriter(format: .jsonl) { (b: inout [UInt8]) in jsonl += b; b.removeAll() }
        try w1.write(sample()); try w1.flush()
        try w2.write(sample()); try w2.flush()
        let lines = String(decoding: csv, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        let header = lines[0].split(separator: ",").map(String.init)
        #expect(header == DeviceMotionWriter.fields)
        let values = lines[1].split(separator: ",").map { Double($0)! }
        let object = try JSONSerialization.jsonObject(with: Data(jsonl)) as! [String: Double]
        #expect(Set(object.keys) == Set(header))
        for (k, v) in zip(header, values) { #expect(object[k] == v, "\(k)") }
        let e = sample().eulerAngles
        #expect(abs(values[header.firstIndex(of: "roll")!] - e.roll) < 1e-9)
        #expect(values[header.firstIndex(of: "magnetic_field_accuracy")!] == 1)
        #expect(values[header.firstIndex(of: "heading")!] == 42.5)
    }
}
