/// Writes an `Encodable` value as compact JSON text in one pass, keys in the order the value encodes
/// them (declaration order for synthesised conformances; dictionaries sorted by key).
///
/// The dashboard encodes one `samples` message per frame; Foundation's `JSONEncoder` builds a tree of
/// boxed values first and costs about three times as much for these messages. This writer streams
/// straight into a `String`: each container writes its opening bracket when it is created and is
/// closed when its owner writes its next element or finishes.
///
/// Numbers: integral doubles below 10¹⁵ are written without a fraction (`100`, not `100.0`); a
/// non-finite double, which JSON cannot carry, throws ``Failure/nonFinite``.
struct DashboardJSONEncoder {
    /// Why a value could not be written.
    enum Failure: Error, Equatable {
        /// A NaN or infinite number (the schema writes those as `null` itself).
        case nonFinite
    }

    /// The value as JSON text.
    static func encode<T: Encodable>(_ value: T, capacity: Int = 256) throws -> String {
        let sink = Sink()
        sink.text.reserveCapacity(capacity)
        try sink.value(value)
        return sink.text
    }

    /// The text being written, shared by every container of one encoding.
    final class Sink {
        var text = ""

        func value<T: Encodable>(_ v: T) throws {
            switch v {
            case let s as String: string(s)
            case let d as Double: try number(d)
            case let i as Int: text += String(i)
            case let i as Int64: text += String(i)
            case let u as UInt64: text += String(u)
            case let b as Bool: text += b ? "true" : "false"
            case let object as [String: any Encodable]:
                // Sorted, so that the text does not depend on the dictionary's hash order.
                text.append("{")
                for (i, key) in object.keys.sorted().enumerated() {
                    if i > 0 { text.append(",") }
                    string(key)
                    text.append(":")
                    if let element = object[key] { try value(element) }
                }
                text.append("}")
            default:
                let node = Node(sink: self)
                try v.encode(to: node)
                node.finish()
            }
        }

        func number(_ d: Double) throws {
            guard d.isFinite else { throw Failure.nonFinite }
            if d == d.rounded(), abs(d) < 1e15 {
                text += String(Int64(d))  // safe: integral and below 1e15
            } else {
                text += d.description
            }
        }

        func string(_ s: String) {
            text.append("\"")
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case let c where c.value < 0x20:
                    let hex = String(c.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: text.unicodeScalars.append(scalar)
                }
            }
            text.append("\"")
        }
    }

    /// One value being encoded: at most one container (keyed `{`, unkeyed `[`) or one single value.
    final class Node: Encoder {
        let sink: Sink
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        private var open: Character?
        private var wroteSingle = false
        private var elements = 0
        /// A nested container still open, closed before this node writes again.
        private var child: Node?

        init(sink: Sink) { self.sink = sink }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            begin("{")
            return KeyedEncodingContainer(Keyed<Key>(node: self))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            begin("[")
            return Unkeyed(node: self)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(node: self) }

        private func begin(_ bracket: Character) {
            guard open == nil else { return }  // asked again: the same container
            open = bracket
            sink.text.append(bracket)
        }

        /// Closes the open child and writes the separator before the next element.
        func nextElement() {
            child?.finish()
            child = nil
            if elements > 0 { sink.text.append(",") }
            elements += 1
        }

        func key(_ key: any CodingKey) {
            nextElement()
            sink.string(key.stringValue)
            sink.text.append(":")
        }

        func nested(_ bracket: Character) -> Node {
            let node = Node(sink: sink)
            node.begin(bracket)
            child = node
            return node
        }

        /// An encoder for a value written in place (`superEncoder`), closed with this node's next write.
        func nestedEncoder() -> Node {
            let node = Node(sink: sink)
            child = node
            return node
        }

        func single<T: Encodable>(_ value: T) throws {
            wroteSingle = true
            try sink.value(value)
        }

        func singleNull() {
            wroteSingle = true
            sink.text += "null"
        }

        /// Closes this node's container (and any child still open); an empty value is `{}`.
        func finish() {
            child?.finish()
            child = nil
            switch open {
            case "{": sink.text.append("}")
            case "[": sink.text.append("]")
            default: if !wroteSingle { sink.text += "{}" }
            }
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }

        mutating func encodeNil(forKey key: Key) throws {
            node.key(key)
            node.sink.text += "null"
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.key(key)
            try node.sink.value(value)
        }

        // Concrete overloads: no dynamic cast on the common types.
        mutating func encode(_ value: String, forKey key: Key) throws {
            node.key(key)
            node.sink.string(value)
        }

        mutating func encode(_ value: Double, forKey key: Key) throws {
            node.key(key)
            try node.sink.number(value)
        }

        mutating func encode(_ value: Int, forKey key: Key) throws {
            node.key(key)
            node.sink.text += String(value)
        }

        mutating func encode(_ value: Bool, forKey key: Key) throws {
            node.key(key)
            node.sink.text += value ? "true" : "false"
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            node.key(key)
            return KeyedEncodingContainer(Keyed<NestedKey>(node: node.nested("{")))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            node.key(key)
            return Unkeyed(node: node.nested("["))
        }

        mutating func superEncoder() -> any Encoder {
            node.key(SuperKey())
            return node.nestedEncoder()
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            node.key(key)
            return node.nestedEncoder()
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }
        private(set) var count = 0

        init(node: Node) { self.node = node }

        mutating func encodeNil() throws {
            node.nextElement()
            node.sink.text += "null"
            count += 1
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            node.nextElement()
            try node.sink.value(value)
            count += 1
        }

        // Concrete overloads: no dynamic cast on the common types (sample rows are numbers).
        mutating func encode(_ value: Double) throws {
            node.nextElement()
            try node.sink.number(value)
            count += 1
        }

        mutating func encode(_ value: Int) throws {
            node.nextElement()
            node.sink.text += String(value)
            count += 1
        }

        mutating func encode(_ value: String) throws {
            node.nextElement()
            node.sink.string(value)
            count += 1
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            node.nextElement()
            count += 1
            return KeyedEncodingContainer(Keyed<NestedKey>(node: node.nested("{")))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            node.nextElement()
            count += 1
            return Unkeyed(node: node.nested("["))
        }

        mutating func superEncoder() -> any Encoder {
            node.nextElement()
            count += 1
            return node.nestedEncoder()
        }
    }

    struct Single: SingleValueEncodingContainer {
        let node: Node
        var codingPath: [any CodingKey] { node.codingPath }

        mutating func encodeNil() throws { node.singleNull() }
        mutating func encode(_ value: Bool) throws { try node.single(value) }
        mutating func encode(_ value: String) throws { try node.single(value) }
        mutating func encode(_ value: Double) throws { try node.single(value) }
        mutating func encode(_ value: Float) throws { try node.single(Double(value)) }
        mutating func encode(_ value: Int) throws { try node.single(value) }
        mutating func encode(_ value: Int8) throws { try node.single(Int(value)) }
        mutating func encode(_ value: Int16) throws { try node.single(Int(value)) }
        mutating func encode(_ value: Int32) throws { try node.single(Int(value)) }
        mutating func encode(_ value: Int64) throws { try node.single(value) }
        mutating func encode(_ value: UInt) throws { try node.single(UInt64(value)) }
        mutating func encode(_ value: UInt8) throws { try node.single(Int(value)) }
        mutating func encode(_ value: UInt16) throws { try node.single(Int(value)) }
        mutating func encode(_ value: UInt32) throws { try node.single(Int(value)) }
        mutating func encode(_ value: UInt64) throws { try node.single(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try node.single(value) }
    }

    private struct SuperKey: CodingKey {
        var stringValue: String { "super" }
        var intValue: Int? { nil }
        init() {}
        init?(stringValue: String) { nil }
        init?(intValue: Int) { nil }
    }
}
