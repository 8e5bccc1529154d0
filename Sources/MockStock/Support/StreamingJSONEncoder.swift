import Foundation
import NIOCore
import Postgres

/// Writes a value's JSON as it is encoded, straight into bytes: the encoder of every answer
/// (`AppRequestContext.responseEncoder`, `AlpacaResponse`).
///
/// Foundation's `JSONEncoder` first builds a tree of the whole answer (a dictionary per
/// object, a coding path per key), converts and sorts its keys, then writes the tree: on a
/// 50-position `GET /v2/positions` that was half of the server's CPU per request. No
/// library on the project's list writes JSON faster, hence this one. What it writes is
/// what Foundation writes with `.iso8601` dates and `.withoutEscapingSlashes`:
///
/// - an object's fields in the order its `encode(to:)` writes them (a type's declaration
///   order), a `[String: …]` dictionary's keys sorted, so an answer is always the same bytes;
/// - dates as RFC 3339 in UTC to the second (`2026-11-28T09:30:00Z`);
/// - integers and `Decimal`s as numbers, by their description; floating-point numbers by
///   their shortest description without a trailing `.0` (a non-finite one is an error);
/// - strings with `"`, `\` and control characters escaped as Foundation escapes them;
/// - with `snakeCase`, every field name converted by Foundation's `.convertToSnakeCase`
///   rule, while a dictionary's keys stay as they are (as Foundation keeps them).
///
/// Containers nest as `encode(to:)` implementations nest them: a value may ask for its
/// keyed container more than once (its fields join one object), and a nested container is
/// closed when its parent writes again. `superEncoder` is not supported.
public struct StreamingJSONEncoder: Sendable {
    public var snakeCase: Bool

    public init(snakeCase: Bool = false) {
        self.snakeCase = snakeCase
    }

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let writer = JSONStreamWriter(snakeCase: snakeCase)
        try writer.value(value)
        return writer.bytes
    }

    public func encodeBuffer<T: Encodable>(_ value: T) throws -> ByteBuffer {
        ByteBuffer(bytes: try encode(value))
    }
}

/// A type that writes its own fields, by names already in snake_case, instead of through
/// `Encodable`'s keyed container (there each field is a generic call through an
/// existential box and its name is converted): for the objects an answer holds by the
/// dozen (`AlpacaPosition`: 50 positions were 800 fields). Used when the encoder writes
/// snake_case names; it must write exactly what its `Encodable` conformance writes then,
/// which a test holds against Foundation's encoder.
protocol SnakeCaseFields: Encodable {
    func writeFields(to fields: inout JSONFields)
}

/// The fields of the object a `SnakeCaseFields` value writes, in the order written.
struct JSONFields {
    fileprivate let writer: JSONStreamWriter
    fileprivate var written = 0

    private mutating func name(_ name: StaticString) {
        if written > 0 { writer.out.byte(UInt8(ascii: ",")) }
        written += 1
        writer.out.byte(UInt8(ascii: "\""))
        writer.out.literal(name)
        writer.out.literal("\":")
    }

    mutating func field(_ name: StaticString, _ value: String) {
        self.name(name)
        writer.out.string(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        self.name(name)
        writer.out.literal(value ? "true" : "false")
    }
}

/// A `[String: …]` dictionary, written with its keys sorted and unconverted.
private protocol StringKeyedDictionary {
    func write(into writer: JSONStreamWriter) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func write(into writer: JSONStreamWriter) throws {
        writer.out.byte(UInt8(ascii: "{"))
        for (index, key) in keys.sorted().enumerated() {
            if index > 0 { writer.out.byte(UInt8(ascii: ",")) }
            writer.out.string(key)
            writer.out.byte(UInt8(ascii: ":"))
            try writer.value(self[key]!)
        }
        writer.out.byte(UInt8(ascii: "}"))
    }
}

/// The bytes written so far, and how values are written. Its methods work on the buffer in
/// place: called on the writer's `out`, each is one access to it, not one per byte.
struct JSONBytes {
    var bytes: [UInt8] = []

    mutating func byte(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func ascii(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    mutating func integer<I: BinaryInteger>(_ number: I) {
        if number == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = number.magnitude
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        while magnitude > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        }
        bytes[start...].reverse()
    }

    mutating func floatingPoint<F: FloatingPoint & CustomStringConvertible>(_ number: F) throws {
        guard number.isFinite else {
            throw EncodingError.invalidValue(number, .init(codingPath: [], debugDescription: "\(number) is not valid in JSON"))
        }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        ascii(text)
    }

    /// A string in quotes, escaped as Foundation escapes it (slashes left alone).
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var clean = 0  // start of the run not yet copied
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                clean = index + 1
                switch byte {
                case UInt8(ascii: "\""): literal("\\\"")
                case UInt8(ascii: "\\"): literal("\\\\")
                case 0x08: literal("\\b")
                case 0x0C: literal("\\f")
                case 0x0A: literal("\\n")
                case 0x0D: literal("\\r")
                case 0x09: literal("\\t")
                default:
                    literal("\\u00")
                    bytes.append(Self.hex[Int(byte >> 4)])
                    bytes.append(Self.hex[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// RFC 3339 in UTC, to the second (Foundation's `.iso8601`).
    mutating func date(_ date: Date) {
        let (days, time) = CivilDate.floorDivide(Int64(date.timeIntervalSince1970.rounded(.down)), 86_400)
        let (year, month, day) = CivilDate.civil(fromDays: days)
        bytes.append(UInt8(ascii: "\""))
        digits(Int(year), 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(month), 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(day), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(time / 3600), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(time / 60 % 60), 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(time % 60), 2)
        literal("Z\"")
    }

    private mutating func digits(_ number: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = number
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// A field name and its colon, converted to snake_case when asked.
    mutating func key(_ name: String, snakeCase: Bool) {
        if !snakeCase {
            string(name)
        } else if !SnakeCase.write(name, into: &bytes) {
            string(SnakeCase.foundation(name))
        }
        bytes.append(UInt8(ascii: ":"))
    }
}

final class JSONStreamWriter: Encoder {
    var out = JSONBytes()
    let snakeCase: Bool
    /// The open containers, innermost last: the byte that closes each and how many
    /// elements it holds so far.
    private(set) var open: [(close: UInt8, count: Int)] = []
    /// `open.count` when the value being encoded began: its own container, if it asked for
    /// one, is `open[base]`.
    private var base = 0
    /// Whether the value being encoded has asked for a container yet.
    private var started = false

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var bytes: [UInt8] { out.bytes }

    init(snakeCase: Bool) {
        self.snakeCase = snakeCase
        out.bytes.reserveCapacity(1024)
    }

    func value<T: Encodable>(_ value: T) throws {
        switch value {
        case let text as String: out.string(text)
        case let number as Int: out.integer(number)
        case let flag as Bool: out.literal(flag ? "true" : "false")
        case let number as Decimal: out.ascii(number.description)
        case let date as Date: out.date(date)
        case let number as Double: try out.floatingPoint(number)
        case let url as URL: out.string(url.absoluteString)
        case let dictionary as any StringKeyedDictionary: try dictionary.write(into: self)
        case let object as any SnakeCaseFields where snakeCase:
            out.byte(UInt8(ascii: "{"))
            var fields = JSONFields(writer: self)
            object.writeFields(to: &fields)
            out.byte(UInt8(ascii: "}"))
        default:
            let (savedBase, savedStarted) = (base, started)
            base = open.count
            started = false
            try value.encode(to: self)
            if started {
                close(to: base)
            } else {
                out.literal("{}")  // a value that wrote nothing is an empty object, as with Foundation
            }
            (base, started) = (savedBase, savedStarted)
        }
    }

    // MARK: Containers

    /// Closes the containers above `depth` (nested ones whose parent writes again).
    func close(to depth: Int) {
        while open.count > depth {
            out.byte(open.removeLast().close)
        }
    }

    /// Before an element of the container at `depth`: closes what is nested in it and
    /// writes the comma after its previous element.
    func element(at depth: Int) {
        if open.count > depth + 1 { close(to: depth + 1) }
        if open[depth].count > 0 { out.byte(UInt8(ascii: ",")) }
        open[depth].count += 1
    }

    /// A field: its comma, name and colon.
    func field(_ key: some CodingKey, at depth: Int) {
        element(at: depth)
        out.key(key.stringValue, snakeCase: snakeCase)
    }

    /// Opens a container for the value being encoded (or continues the object it opened).
    private func begin(_ opening: UInt8, _ closing: UInt8) -> Int {
        if started {
            close(to: base + 1)
            precondition(open.count == base + 1 && open[base].close == closing,
                         "a value asked for two different containers")
            return base
        }
        started = true
        out.byte(opening)
        open.append((closing, 0))
        return base
    }

    func nested(_ opening: UInt8, _ closing: UInt8) -> Int {
        out.byte(opening)
        open.append((closing, 0))
        return open.count - 1
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedJSON<Key>(writer: self, depth: begin(UInt8(ascii: "{"), UInt8(ascii: "}"))))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedJSON(writer: self, depth: begin(UInt8(ascii: "["), UInt8(ascii: "]")))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        started = true
        return SingleJSON(writer: self)
    }
}

/// Foundation's `.convertToSnakeCase`, for names of ASCII letters, digits and underscores:
/// words split where a lower-case letter or digit meets an upper-case one, and before the
/// last capital of a run of capitals followed by a lower-case letter (`URLString` is
/// `url_string`); lower-cased and joined by underscores. Other names are left to Foundation.
enum SnakeCase {
    /// Writes `name` converted, in quotes; false (writing nothing) when it is not plain ASCII.
    /// The converted name is built on the stack and appended at once: a response of 50
    /// positions converts 800 names.
    static func write(_ name: String, into bytes: inout [UInt8]) -> Bool {
        var name = name
        return name.withUTF8 { utf8 in
            var capitals = false
            for byte in utf8 {
                if isUpper(byte) {
                    capitals = true
                } else if !(isLower(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x5F) {
                    return false
                }
            }
            guard capitals else {
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: utf8)
                bytes.append(UInt8(ascii: "\""))
                return true
            }
            let count = utf8.count
            // Each byte of the name, an underscore before at most each, and the quotes.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count * 2 + 2) { out in
                var written = 0
                out[written] = UInt8(ascii: "\"")
                written += 1
                func word(_ from: Int, _ to: Int) {
                    if written > 1 {
                        out[written] = UInt8(ascii: "_")
                        written += 1
                    }
                    for index in from..<to {
                        let byte = utf8[index]
                        out[written] = isUpper(byte) ? byte + 32 : byte
                        written += 1
                    }
                }
                var wordStart = 0, searchFrom = 1
                while true {
                    var upper = searchFrom
                    while upper < count && !isUpper(utf8[upper]) { upper += 1 }
                    if upper >= count { break }
                    word(wordStart, upper)
                    var lower = upper
                    while lower < count && !isLower(utf8[lower]) { lower += 1 }
                    if lower >= count {
                        wordStart = upper
                        break
                    }
                    if lower == upper + 1 {
                        wordStart = upper
                    } else {
                        word(upper, lower - 1)
                        wordStart = lower - 1
                    }
                    searchFrom = lower + 1
                }
                word(wordStart, count)
                out[written] = UInt8(ascii: "\"")
                written += 1
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: out[..<written]))
            }
            return true
        }
    }

    /// Foundation's own conversion of one name: the key of a one-field object it encodes.
    static func foundation(_ name: String) -> String {
        struct OneField: Encodable {
            let name: String
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(0, forKey: Key(stringValue: name))
            }
        }
        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let converter = JSONEncoder()
        converter.keyEncodingStrategy = .convertToSnakeCase
        guard let data = try? converter.encode(OneField(name: name)),
              let object = try? JSONDecoder().decode([String: Int].self, from: data),
              let snake = object.keys.first
        else { return name }
        return snake
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
    private static func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
}

private struct KeyedJSON<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONStreamWriter
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    private func field(_ key: Key) {
        writer.field(key, at: depth)
    }

    mutating func encodeNil(forKey key: Key) throws { field(key); writer.out.literal("null") }
    mutating func encode(_ value: Bool, forKey key: Key) throws { field(key); writer.out.literal(value ? "true" : "false") }
    mutating func encode(_ value: String, forKey key: Key) throws { field(key); writer.out.string(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { field(key); try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { field(key); try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { field(key); writer.out.integer(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { field(key); try writer.value(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        field(key)
        return KeyedEncodingContainer(KeyedJSON<NestedKey>(writer: writer, depth: writer.nested(UInt8(ascii: "{"), UInt8(ascii: "}"))))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        field(key)
        return UnkeyedJSON(writer: writer, depth: writer.nested(UInt8(ascii: "["), UInt8(ascii: "]")))
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("StreamingJSONEncoder has no superEncoder") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { preconditionFailure("StreamingJSONEncoder has no superEncoder") }
}

private struct UnkeyedJSON: UnkeyedEncodingContainer {
    let writer: JSONStreamWriter
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { writer.open.count > depth ? writer.open[depth].count : 0 }

    mutating func encodeNil() throws { writer.element(at: depth); writer.out.literal("null") }
    mutating func encode(_ value: Bool) throws { writer.element(at: depth); writer.out.literal(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { writer.element(at: depth); writer.out.string(value) }
    mutating func encode(_ value: Double) throws { writer.element(at: depth); try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Float) throws { writer.element(at: depth); try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Int) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: Int8) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: Int16) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: Int32) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: Int64) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: UInt) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: UInt8) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: UInt16) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: UInt32) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode(_ value: UInt64) throws { writer.element(at: depth); writer.out.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { writer.element(at: depth); try writer.value(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        writer.element(at: depth)
        return KeyedEncodingContainer(KeyedJSON<NestedKey>(writer: writer, depth: writer.nested(UInt8(ascii: "{"), UInt8(ascii: "}"))))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.element(at: depth)
        return UnkeyedJSON(writer: writer, depth: writer.nested(UInt8(ascii: "["), UInt8(ascii: "]")))
    }

    mutating func superEncoder() -> any Encoder { preconditionFailure("StreamingJSONEncoder has no superEncoder") }
}

private struct SingleJSON: SingleValueEncodingContainer {
    let writer: JSONStreamWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { writer.out.literal("null") }
    mutating func encode(_ value: Bool) throws { writer.out.literal(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { writer.out.string(value) }
    mutating func encode(_ value: Double) throws { try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Float) throws { try writer.out.floatingPoint(value) }
    mutating func encode(_ value: Int) throws { writer.out.integer(value) }
    mutating func encode(_ value: Int8) throws { writer.out.integer(value) }
    mutating func encode(_ value: Int16) throws { writer.out.integer(value) }
    mutating func encode(_ value: Int32) throws { writer.out.integer(value) }
    mutating func encode(_ value: Int64) throws { writer.out.integer(value) }
    mutating func encode(_ value: UInt) throws { writer.out.integer(value) }
    mutating func encode(_ value: UInt8) throws { writer.out.integer(value) }
    mutating func encode(_ value: UInt16) throws { writer.out.integer(value) }
    mutating func encode(_ value: UInt32) throws { writer.out.integer(value) }
    mutating func encode(_ value: UInt64) throws { writer.out.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.value(value) }
}
