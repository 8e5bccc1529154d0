import Foundation
import NIOCore

/// The part of MessagePack (msgpack.org's specification) that Alpaca's market-data
/// stream uses: maps with string keys, arrays, strings, integers, 64-bit floats, nil,
/// booleans and the timestamp extension (type -1). No msgpack library is among the
/// packages this project may depend on, and this subset is small: written here, each
/// format checked by a test against bytes worked out from the specification.
enum MessagePack {
    /// A decoded value. Map keys that are not strings are dropped; binary data and other
    /// extensions are kept as opaque bytes.
    indirect enum Value: Sendable, Equatable {
        case `nil`
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case binary([UInt8])
        case array([Value])
        case map([String: Value])
        case timestamp(seconds: Int64, nanoseconds: UInt32)
        case ext(type: Int8, [UInt8])

        var string: String? {
            if case .string(let text) = self { text } else { nil }
        }

        var array: [Value]? {
            if case .array(let items) = self { items } else { nil }
        }

        var map: [String: Value]? {
            if case .map(let fields) = self { fields } else { nil }
        }
    }

    struct Malformed: Error {}

    /// Decodes one value that fills `bytes` whole; nesting deeper than 32 levels, a length
    /// beyond the bytes or bytes left over are malformed.
    static func decode(_ bytes: some Collection<UInt8>) throws -> Value {
        var reader = Reader(bytes: Array(bytes))
        let value = try reader.value(depth: 0)
        guard reader.offset == reader.bytes.count else { throw Malformed() }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw Malformed() }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func unsigned(_ size: Int) throws -> UInt64 {
            try take(size).reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func signed(_ size: Int) throws -> Int64 {
            let raw = try unsigned(size)
            let shift = UInt64(64 - size * 8)
            return Int64(bitPattern: raw << shift) >> Int64(shift)
        }

        mutating func length(_ size: Int) throws -> Int {
            Int(try unsigned(size))
        }

        mutating func value(depth: Int) throws -> Value {
            guard depth < 32 else { throw Malformed() }
            let head = try take(1).first!
            switch head {
            case 0x00...0x7f: return .int(Int64(head))
            case 0x80...0x8f: return try map(Int(head & 0x0f), depth: depth)
            case 0x90...0x9f: return try array(Int(head & 0x0f), depth: depth)
            case 0xa0...0xbf: return try string(Int(head & 0x1f))
            case 0xc0: return .nil
            case 0xc2: return .bool(false)
            case 0xc3: return .bool(true)
            case 0xc4, 0xc5, 0xc6: return .binary(Array(try take(try length(1 << Int(head - 0xc4)))))
            case 0xc7, 0xc8, 0xc9:
                let count = try length(1 << Int(head - 0xc7))
                return try ext(count)
            case 0xca: return .double(Double(Float(bitPattern: UInt32(try unsigned(4)))))
            case 0xcb: return .double(Double(bitPattern: try unsigned(8)))
            case 0xcc, 0xcd, 0xce, 0xcf:
                let value = try unsigned(1 << Int(head - 0xcc))
                guard value <= UInt64(Int64.max) else { throw Malformed() }
                return .int(Int64(value))
            case 0xd0, 0xd1, 0xd2, 0xd3: return .int(try signed(1 << Int(head - 0xd0)))
            case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: return try ext(1 << Int(head - 0xd4))
            case 0xd9, 0xda, 0xdb: return try string(try length(1 << Int(head - 0xd9)))
            case 0xdc, 0xdd: return try array(try length(2 << Int(head - 0xdc)), depth: depth)
            case 0xde, 0xdf: return try map(try length(2 << Int(head - 0xde)), depth: depth)
            case 0xe0...0xff: return .int(Int64(Int8(bitPattern: head)))
            default: throw Malformed()  // 0xc1 is never used
            }
        }

        mutating func string(_ count: Int) throws -> Value {
            guard let text = String(validating: try take(count), as: UTF8.self) else { throw Malformed() }
            return .string(text)
        }

        mutating func array(_ count: Int, depth: Int) throws -> Value {
            guard count <= bytes.count - offset else { throw Malformed() }
            return .array(try (0..<count).map { _ in try value(depth: depth + 1) })
        }

        mutating func map(_ count: Int, depth: Int) throws -> Value {
            guard count <= bytes.count - offset else { throw Malformed() }
            var fields: [String: Value] = [:]
            for _ in 0..<count {
                let key = try value(depth: depth + 1)
                let value = try value(depth: depth + 1)
                if case .string(let name) = key { fields[name] = value }
            }
            return .map(fields)
        }

        mutating func ext(_ count: Int) throws -> Value {
            let type = Int8(bitPattern: try take(1).first!)
            let data = try take(count)
            guard type == -1 else { return .ext(type: type, Array(data)) }
            var payload = Reader(bytes: Array(data))
            switch count {
            case 4: return .timestamp(seconds: Int64(try payload.unsigned(4)), nanoseconds: 0)
            case 8:
                let both = try payload.unsigned(8)
                return .timestamp(seconds: Int64(both & 0x3_ffff_ffff), nanoseconds: UInt32(both >> 34))
            case 12:
                let nanoseconds = UInt32(try payload.unsigned(4))
                return .timestamp(seconds: try payload.signed(8), nanoseconds: nanoseconds)
            default: throw Malformed()
            }
        }
    }

    /// Writes values one after another into a buffer: a map or an array is its header
    /// (`map(count:)`, `array(count:)`) followed by that many entries.
    struct Writer {
        var buffer: ByteBuffer

        init(capacity: Int = 256) {
            buffer = ByteBufferAllocator().buffer(capacity: capacity)
        }

        mutating func map(count: Int) {
            header(count, fix: 0x80, fixLimit: 16, wide: 0xde)
        }

        mutating func array(count: Int) {
            header(count, fix: 0x90, fixLimit: 16, wide: 0xdc)
        }

        private mutating func header(_ count: Int, fix: UInt8, fixLimit: Int, wide: UInt8) {
            if count < fixLimit {
                buffer.writeInteger(fix | UInt8(count))
            } else if count <= Int(UInt16.max) {
                buffer.writeInteger(wide)
                buffer.writeInteger(UInt16(count))
            } else {
                buffer.writeInteger(wide + 1)
                buffer.writeInteger(UInt32(count))
            }
        }

        mutating func string(_ text: String) {
            let count = text.utf8.count
            if count < 32 {
                buffer.writeInteger(0xa0 | UInt8(count))
            } else if count <= Int(UInt8.max) {
                buffer.writeInteger(UInt8(0xd9))
                buffer.writeInteger(UInt8(count))
            } else if count <= Int(UInt16.max) {
                buffer.writeInteger(UInt8(0xda))
                buffer.writeInteger(UInt16(count))
            } else {
                buffer.writeInteger(UInt8(0xdb))
                buffer.writeInteger(UInt32(count))
            }
            buffer.writeString(text)
        }

        mutating func int(_ value: Int64) {
            switch value {
            case 0...0x7f: buffer.writeInteger(UInt8(value))
            case -32..<0: buffer.writeInteger(Int8(value))
            case Int64(Int8.min)...Int64(Int8.max):
                buffer.writeInteger(UInt8(0xd0))
                buffer.writeInteger(Int8(value))
            case Int64(Int16.min)...Int64(Int16.max):
                buffer.writeInteger(UInt8(0xd1))
                buffer.writeInteger(Int16(value))
            case Int64(Int32.min)...Int64(Int32.max):
                buffer.writeInteger(UInt8(0xd2))
                buffer.writeInteger(Int32(value))
            default:
                buffer.writeInteger(UInt8(0xd3))
                buffer.writeInteger(value)
            }
        }

        mutating func double(_ value: Double) {
            buffer.writeInteger(UInt8(0xcb))
            buffer.writeInteger(value.bitPattern)
        }

        mutating func `nil`() {
            buffer.writeInteger(UInt8(0xc0))
        }

        mutating func bool(_ value: Bool) {
            buffer.writeInteger(UInt8(value ? 0xc3 : 0xc2))
        }

        /// The timestamp extension in its 96-bit form (ext 8, type -1): nanoseconds, then
        /// seconds since 1970, both big-endian.
        mutating func timestamp(seconds: Int64, nanoseconds: UInt32) {
            buffer.writeInteger(UInt8(0xc7))
            buffer.writeInteger(UInt8(12))
            buffer.writeInteger(Int8(-1))
            buffer.writeInteger(nanoseconds)
            buffer.writeInteger(seconds)
        }
    }
}
