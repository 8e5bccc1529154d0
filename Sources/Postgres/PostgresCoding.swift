import Foundation

/// A parameter value as it is sent to the server.
public enum PostgresValue: Sendable, Hashable {
    /// Text format: the value's PostgreSQL literal, without quoting.
    case text(String)
    /// Binary format: the type's binary wire representation.
    case binary([UInt8])
    case null
}

/// A Swift value that can be bound as a statement parameter.
public protocol PostgresEncodable: Sendable {
    /// The type the parameter is declared with; `.unspecified` lets the server infer it.
    static var postgresDataType: PostgresDataType { get }
    var postgresValue: PostgresValue { get }
}

/// A Swift value that can be read from a result column.
public protocol PostgresDecodable {
    /// Decodes a cell; a NULL cell is an error unless the type is optional.
    static func decode(from cell: PostgresCell) throws -> Self
}

public typealias PostgresCodable = PostgresEncodable & PostgresDecodable

/// One field of a result row, in PostgreSQL's text format.
public struct PostgresCell {
    public let bytes: ArraySlice<UInt8>?
    public let dataType: PostgresDataType
    public let columnName: String

    /// The cell's bytes, or an error naming the column when it is NULL.
    public func requireBytes<T>(for type: T.Type) throws -> ArraySlice<UInt8> {
        guard let bytes else {
            throw PostgresError.decoding(column: columnName, "is NULL; decode as \(T.self)? to allow NULL")
        }
        return bytes
    }

    func mismatch<T>(_ type: T.Type) -> PostgresError {
        .decoding(column: columnName, "cannot decode \(dataType) as \(T.self)")
    }

    func malformed<T>(_ type: T.Type) -> PostgresError {
        .decoding(column: columnName, "value of type \(dataType) is not a valid \(T.self)")
    }

    var string: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
}

// MARK: - Optional

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public static var postgresDataType: PostgresDataType { Wrapped.postgresDataType }
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Wrapped? {
        cell.bytes == nil ? nil : try Wrapped.decode(from: cell)
    }
}

// MARK: - Integers

/// Parses a decimal integer from ASCII without allocating.
func parseInteger(_ bytes: ArraySlice<UInt8>) -> Int64? {
    var index = bytes.startIndex
    guard index < bytes.endIndex else { return nil }
    let negative = bytes[index] == UInt8(ascii: "-")
    if negative || bytes[index] == UInt8(ascii: "+") { index += 1 }
    guard index < bytes.endIndex else { return nil }
    var value: Int64 = 0
    while index < bytes.endIndex {
        let digit = bytes[index] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (next, o2) = negative
            ? times10.subtractingReportingOverflow(Int64(digit))
            : times10.addingReportingOverflow(Int64(digit))
        guard !o1, !o2 else { return nil }
        value = next
        index += 1
    }
    return value
}

protocol PostgresInteger: FixedWidthInteger, PostgresCodable {}

extension PostgresInteger {
    public var postgresValue: PostgresValue { .text(String(self)) }

    public static func decode(from cell: PostgresCell) throws -> Self {
        let bytes = try cell.requireBytes(for: Self.self)
        guard cell.dataType.isInteger else { throw cell.mismatch(Self.self) }
        guard let wide = parseInteger(bytes), let value = Self(exactly: wide) else {
            throw cell.malformed(Self.self)
        }
        return value
    }
}

extension Int: PostgresInteger {
    public static var postgresDataType: PostgresDataType { .int8 }
}

extension Int64: PostgresInteger {
    public static var postgresDataType: PostgresDataType { .int8 }
}

extension Int32: PostgresInteger {
    public static var postgresDataType: PostgresDataType { .int4 }
}

extension Int16: PostgresInteger {
    public static var postgresDataType: PostgresDataType { .int2 }
}

// MARK: - Bool

extension Bool: PostgresCodable {
    public static var postgresDataType: PostgresDataType { .bool }
    public var postgresValue: PostgresValue { .text(self ? "t" : "f") }

    public static func decode(from cell: PostgresCell) throws -> Bool {
        let bytes = try cell.requireBytes(for: Bool.self)
        guard cell.dataType == .bool else { throw cell.mismatch(Bool.self) }
        switch bytes.first {
        case UInt8(ascii: "t"): return true
        case UInt8(ascii: "f"): return false
        default: throw cell.malformed(Bool.self)
        }
    }
}

// MARK: - String

extension String: PostgresCodable {
    /// Strings are sent untyped, like a quoted literal, so they fit text, varchar,
    /// jsonb or enum columns alike.
    public static var postgresDataType: PostgresDataType { .unspecified }
    public var postgresValue: PostgresValue { .text(self) }

    public static func decode(from cell: PostgresCell) throws -> String {
        let bytes = try cell.requireBytes(for: String.self)
        guard cell.dataType.isTextual else { throw cell.mismatch(String.self) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: - String enums

/// A Swift enum whose cases are the values of a text column (`side`, `outcome`, `mode`):
/// bound as its raw value, and decoded strictly, so a value the enum does not know is an
/// error naming the column rather than a silent default.
extension PostgresEncodable where Self: RawRepresentable, RawValue == String {
    public static var postgresDataType: PostgresDataType { .unspecified }
    public var postgresValue: PostgresValue { .text(rawValue) }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue == String {
    public static func decode(from cell: PostgresCell) throws -> Self {
        guard let value = Self(rawValue: try String.decode(from: cell)) else { throw cell.malformed(Self.self) }
        return value
    }
}

// MARK: - Decimal

extension Decimal: PostgresCodable {
    public static var postgresDataType: PostgresDataType { .numeric }

    public var postgresValue: PostgresValue { .text(description) }

    public static func decode(from cell: PostgresCell) throws -> Decimal {
        let bytes = try cell.requireBytes(for: Decimal.self)
        guard cell.dataType == .numeric || cell.dataType.isInteger else { throw cell.mismatch(Decimal.self) }
        if let value = Self.plainNumeric(bytes) { return value }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN
        else {
            throw cell.malformed(Decimal.self)
        }
        return value
    }

    /// PostgreSQL's text of a numeric of at most 18 significant digits (`-123.4500`),
    /// read without Foundation's general parser, which costs about three times as much
    /// (a year of daily values is thousands of them); nil for anything else, which that
    /// parser then reads. Trailing fraction zeros are dropped, as that parser does.
    static func plainNumeric(_ bytes: some Collection<UInt8>) -> Decimal? {
        var negative = false, point = false, seen = false
        var significand: UInt64 = 0, digits = 0, scale = 0
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where index == 0:
                negative = true
            case UInt8(ascii: "."):
                guard !point else { return nil }
                point = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits > 0 || byte != UInt8(ascii: "0") { digits += 1 }
                guard digits <= 18 else { return nil }
                significand = significand * 10 + UInt64(byte - UInt8(ascii: "0"))
                if point { scale += 1 }
                seen = true
            default:
                return nil
            }
        }
        guard seen else { return nil }
        // A zero is plain zero: a negative one would be Decimal's NaN.
        guard significand != 0 else { return Decimal.zero }
        while scale > 0 && significand % 10 == 0 {
            significand /= 10
            scale -= 1
        }
        return Decimal(sign: negative ? .minus : .plus, exponent: -scale, significand: Decimal(significand))
    }
}

// MARK: - Double (measurements only; money is Decimal)

extension Double: PostgresCodable {
    public static var postgresDataType: PostgresDataType { .float8 }
    public var postgresValue: PostgresValue { .text("\(self)") }

    public static func decode(from cell: PostgresCell) throws -> Double {
        let bytes = try cell.requireBytes(for: Double.self)
        guard cell.dataType == .float8 || cell.dataType == .float4 || cell.dataType == .numeric
            || cell.dataType.isInteger
        else { throw cell.mismatch(Double.self) }
        guard let value = Double(String(decoding: bytes, as: UTF8.self)) else { throw cell.malformed(Double.self) }
        return value
    }
}

// MARK: - Date

extension Date: PostgresCodable {
    public static var postgresDataType: PostgresDataType { .timestamptz }
    public var postgresValue: PostgresValue { .text(PostgresTimestamp.format(self)) }

    /// Reads `timestamptz` (and `timestamp`, taken as UTC, and `date`, at midnight UTC).
    public static func decode(from cell: PostgresCell) throws -> Date {
        let bytes = try cell.requireBytes(for: Date.self)
        guard cell.dataType == .timestamptz || cell.dataType == .timestamp || cell.dataType == .date else {
            throw cell.mismatch(Date.self)
        }
        guard let date = PostgresTimestamp.parse(bytes) else { throw cell.malformed(Date.self) }
        return date
    }
}

// MARK: - Data

extension Data: PostgresCodable {
    public static var postgresDataType: PostgresDataType { .bytea }
    public var postgresValue: PostgresValue { .binary([UInt8](self)) }

    public static func decode(from cell: PostgresCell) throws -> Data {
        let bytes = try cell.requireBytes(for: Data.self)
        guard cell.dataType == .bytea else { throw cell.mismatch(Data.self) }
        // bytea_output = hex: "\x" followed by two hex digits per byte.
        guard bytes.count >= 2, bytes.count % 2 == 0, bytes[bytes.startIndex] == UInt8(ascii: "\\"),
            bytes[bytes.startIndex + 1] == UInt8(ascii: "x")
        else { throw cell.malformed(Data.self) }
        var data = Data(capacity: (bytes.count - 2) / 2)
        var index = bytes.startIndex + 2
        while index < bytes.endIndex {
            guard let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else {
                throw cell.malformed(Data.self)
            }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

// MARK: - Arrays (parameters only, e.g. `= ANY(\(symbols))`)

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public static var postgresDataType: PostgresDataType { Element.postgresArrayType }

    public var postgresValue: PostgresValue {
        .text("{" + map { $0.postgresArrayLiteral }.joined(separator: ",") + "}")
    }
}

/// A type that can be an element of an array parameter.
public protocol PostgresArrayElement: PostgresEncodable {
    static var postgresArrayType: PostgresDataType { get }
    var postgresArrayLiteral: String { get }
}

extension Int: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
    public var postgresArrayLiteral: String { String(self) }
}

extension Decimal: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .numericArray }
    public var postgresArrayLiteral: String { description }
}

extension Date: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .timestamptzArray }
    public var postgresArrayLiteral: String { "\"" + PostgresTimestamp.format(self) + "\"" }
}

extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { Wrapped.postgresArrayType }
    public var postgresArrayLiteral: String { self?.postgresArrayLiteral ?? "NULL" }
}

extension String: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .textArray }

    public var postgresArrayLiteral: String {
        var quoted = "\""
        for character in unicodeScalars {
            if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }
}
