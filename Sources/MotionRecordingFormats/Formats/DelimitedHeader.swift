import MotionFusion
import MotionSources

/// The separator of a delimited header: tab, `;` or `,`, whichever occurs most outside quotes.
func detectSeparator(_ header: UnsafeBufferPointer<UInt8>) -> UInt8 {
    var counts: [UInt8: Int] = [0x2C: 0, 0x3B: 0, 0x09: 0]
    var quoted = false
    for b in header {
        if b == 0x22 { quoted.toggle() } else if !quoted, counts[b] != nil { counts[b]! += 1 }
    }
    if counts[0x09]! > 0 && counts[0x09]! >= counts[0x2C]! && counts[0x09]! >= counts[0x3B]! { return 0x09 }
    if counts[0x3B]! > counts[0x2C]! { return 0x3B }
    return 0x2C
}

/// Splits `name(unit)` (SensorLog) or `Name (unit)` (phyphox) into a name and a unit.
func splitUnit(_ header: String) -> (name: String, unit: String) {
    guard header.hasSuffix(")"), let open = header.lastIndex(of: "(") else { return (header.trimming(" "), "") }
    let name = header[..<open].trimming(" ")
    let unit = header[header.index(after: open)..<header.index(before: header.endIndex)].trimming(" ")
    return (name, unit)
}

/// True for a microtesla unit however the µ is written.
func isMicrotesla(_ unit: String) -> Bool {
    ["µt", "μt", "ut", "microtesla"].contains(unit.lowercased())
}

/// True for a field that holds no value: empty, `null`, `NaN` (where a format writes it for a gap).
func isMissing(_ field: UnsafeBufferPointer<UInt8>) -> Bool {
    field.isEmpty || field.equals("null") || field.equals("NaN") || field.equals("nan")
}
