/// Topic filter matching (MQTT 3.1.1 §4.7): `+` matches one level, `#` (last) any number of levels
/// including none; filters starting with a wildcard do not match topics starting with `$`.
package func mqttTopic(_ topic: String, matches filter: String) -> Bool {
    let t = topic.split(separator: "/", omittingEmptySubsequences: false)
    let f = filter.split(separator: "/", omittingEmptySubsequences: false)
    if topic.hasPrefix("$"), let first = f.first, first == "+" || first == "#" { return false }
    var i = 0
    while i < f.count {
        if f[i] == "#" { return i == f.count - 1 }
        guard i < t.count else { return false }
        if f[i] != "+" && f[i] != t[i] { return false }
        i += 1
    }
    return i == t.count
}
