/// systemd's sensor hwdb (`60-sensor.hwdb` and local `61-*.hwdb`) in its text form: records of
/// match patterns with the udev properties they set (`ACCEL_MOUNT_MATRIX`, `ACCEL_LOCATION`,
/// `PROXIMITY_NEAR_LEVEL`).
///
/// Format, as systemd reads it: a line starting with `#` is a comment wherever it appears (so a
/// comment between two match lines does not split a record); a line starting at column 0 is a
/// match pattern; a line starting with white space is a `KEY=value` property of the patterns
/// above it; an empty line ends the record. Patterns are shell globs (`*`, `?`, `[…]`) over the
/// lookup key `sensor:[<label>:]modalias:<parent modalias>:<DMI modalias>`.
package struct SensorHwdb: Sendable {
    /// One record: its patterns and the properties they set.
    package struct Entry: Sendable, Hashable {
        /// The glob patterns, in file order.
        package var patterns: [String]
        /// The properties, in file order (a key may repeat; the last wins).
        package var properties: [(key: String, value: String)]
        /// The 1-based line of the first pattern.
        package var line: Int

        package static func == (a: Entry, b: Entry) -> Bool {
            a.patterns == b.patterns && a.line == b.line && a.properties.map(\.key) == b.properties.map(\.key)
                && a.properties.map(\.value) == b.properties.map(\.value)
        }
        package func hash(into h: inout Hasher) { h.combine(patterns); h.combine(line) }

        /// The value of `key`, the last one when it repeats.
        package func value(_ key: String) -> String? { properties.last(where: { $0.key == key })?.value }
    }

    /// The records, in file order (several files concatenated in load order).
    package var entries: [Entry]
    /// Problems met while parsing (record without properties, property without pattern), with line numbers.
    package var warnings: [String]

    /// Parses hwdb text.
    package init(parsing text: String) {
        var entries: [Entry] = []
        var warnings: [String] = []
        var patterns: [String] = []
        var props: [(String, String)] = []
        var firstLine = 0
        func flush() {
            if !patterns.isEmpty {
                if props.isEmpty {
                    warnings.append("line \(firstLine): match without properties, ignored")
                } else {
                    entries.append(Entry(patterns: patterns, properties: props.map { (key: $0.0, value: $0.1) }, line: firstLine))
                }
            }
            patterns = []
            props = []
        }
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(raw)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.hasPrefix("#") { continue }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                flush()
                continue
            }
            if line.first == " " || line.first == "\t" {
                let body = SysfsValue.trimmed(String(line))
                guard !patterns.isEmpty else {
                    warnings.append("line \(lineNumber): property without a match, ignored")
                    continue
                }
                guard let eq = body.firstIndex(of: "=") else {
                    warnings.append("line \(lineNumber): property without '=', ignored")
                    continue
                }
                props.append((String(body[..<eq]), SysfsValue.trimmed(String(body[body.index(after: eq)...]))))
            } else {
                if !props.isEmpty { flush() }
                if patterns.isEmpty { firstLine = lineNumber }
                // Trailing blanks are not part of a pattern; inner blanks are ("pnAYANEO 2*").
                var p = line
                while p.last == " " || p.last == "\t" { p.removeLast() }
                patterns.append(String(p))
            }
        }
        flush()
        self.entries = entries
        self.warnings = warnings
    }

    /// Concatenates several databases; entries of later ones win on lookup.
    package init(merging parts: [SensorHwdb]) {
        entries = parts.flatMap(\.entries)
        warnings = parts.flatMap(\.warnings)
    }

    /// The properties that apply to `key`: those of every matching record merged in file order,
    /// so a later record overrides an earlier one for the same property.
    package func properties(forKey key: String) -> [String: String] {
        var out: [String: String] = [:]
        for e in entries where e.patterns.contains(where: { Glob.matches(pattern: $0, key) }) {
            for p in e.properties { out[p.key] = p.value }
        }
        return out
    }

    /// The lookup key udev's `60-sensor.rules` builds for an IIO device.
    ///
    /// - Parameters:
    ///   - label: the device's `label` attribute, if it has a non-empty one.
    ///   - parentModalias: the parent device's `modalias` (`acpi:BOSC0200:BOSC0200:`, `i2c:bmc150_accel`, …).
    ///   - dmiModalias: `/sys/class/dmi/id/modalias` (`dmi:bvn…:svn…:pn…:…`); empty on machines without DMI.
    package static func lookupKey(label: String?, parentModalias: String, dmiModalias: String) -> String {
        if let label, !label.isEmpty {
            return "sensor:\(label):modalias:\(parentModalias):\(dmiModalias)"
        }
        return "sensor:modalias:\(parentModalias):\(dmiModalias)"
    }

    /// The default places systemd keeps hwdb sources, lowest priority first.
    package static let defaultSearchDirectories = ["/usr/lib/udev/hwdb.d", "/lib/udev/hwdb.d", "/etc/udev/hwdb.d"]

    /// Loads every `*sensor*.hwdb` file under the given directories (sorted by file name, later
    /// directories winning), through `fs`. Missing directories are skipped.
    package static func load(directories: [String] = defaultSearchDirectories, fileSystem fs: any LinuxFileSystem) -> SensorHwdb {
        var seen: [String: String] = [:]  // file name → path; /etc overrides /lib as udev does
        for dir in directories {
            guard let names = try? fs.contents(ofDirectory: dir) else { continue }
            for n in names where n.hasSuffix(".hwdb") && n.contains("sensor") { seen[n] = joinPath(dir, n) }
        }
        let parts = seen.keys.sorted().compactMap { name -> SensorHwdb? in
            guard let text = try? fs.readText(seen[name]!) else { return nil }
            return SensorHwdb(parsing: text)
        }
        return SensorHwdb(merging: parts)
    }
}

/// Shell glob matching as `fnmatch(3)` without flags: `*` matches any run (including `/` and `:`),
/// `?` one character, `[abc]`, `[a-z]` and `[!x]` a class.
enum Glob {
    static func matches(pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.utf8), t = Array(text.utf8)
        var pi = 0, ti = 0
        var starP = -1, starT = 0
        while ti < t.count {
            if pi < p.count {
                switch p[pi] {
                case UInt8(ascii: "*"):
                    starP = pi; starT = ti; pi += 1
                    continue
                case UInt8(ascii: "?"):
                    pi += 1; ti += 1
                    continue
                case UInt8(ascii: "["):
                    if let (ok, next) = matchClass(p, pi, t[ti]) {
                        if ok { pi = next; ti += 1; continue }
                    } else if t[ti] == p[pi] {
                        pi += 1; ti += 1; continue
                    }
                default:
                    if p[pi] == t[ti] { pi += 1; ti += 1; continue }
                }
            }
            if starP >= 0 {
                pi = starP + 1; starT += 1; ti = starT
                continue
            }
            return false
        }
        while pi < p.count && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }

    /// Matches `c` against the class starting at `p[start] == '['`. Returns (matched, index after `]`),
    /// or `nil` when the class is not closed (then `[` is literal).
    private static func matchClass(_ p: [UInt8], _ start: Int, _ c: UInt8) -> (Bool, Int)? {
        var i = start + 1
        var negate = false
        if i < p.count && (p[i] == UInt8(ascii: "!") || p[i] == UInt8(ascii: "^")) { negate = true; i += 1 }
        var matched = false
        var first = true
        while i < p.count {
            if p[i] == UInt8(ascii: "]") && !first { return (matched != negate, i + 1) }
            first = false
            if i + 2 < p.count && p[i + 1] == UInt8(ascii: "-") && p[i + 2] != UInt8(ascii: "]") {
                if c >= p[i] && c <= p[i + 2] { matched = true }
                i += 3
            } else {
                if c == p[i] { matched = true }
                i += 1
            }
        }
        return nil
    }
}
