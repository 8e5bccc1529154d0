import Foundation
@testable import MockStock
import Testing

/// Every answer's JSON is written by `StreamingJSONEncoder`; clients were written against
/// Foundation's. These pin the two to the same JSON, value for value.
@Suite("Streaming JSON encoder")
struct StreamingJSONEncoderTests {
    /// Foundation's encoder as answers used it: RFC 3339 dates, slashes unescaped.
    static func foundation(snakeCase: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        return encoder
    }

    /// JSON parsed and written again with sorted keys: the same text when it says the same.
    static func canonical(_ json: [UInt8]) throws -> String {
        let parsed = try JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed])
        return String(decoding: try JSONSerialization.data(withJSONObject: parsed, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
    }

    /// Both encoders' JSON of `value`, and whether they say the same.
    func same<T: Encodable>(_ value: T, snakeCase: Bool = false) throws -> (ours: String, theirs: String, equal: Bool) {
        let ours = try StreamingJSONEncoder(snakeCase: snakeCase).encode(value)
        let theirs = Array(try Self.foundation(snakeCase: snakeCase).encode(value))
        return (String(decoding: ours, as: UTF8.self), String(decoding: theirs, as: UTF8.self), try Self.canonical(ours) == Self.canonical(theirs))
    }

    struct Position: Encodable {
        var symbol = "BRK.B"
        var assetID = "a/1"
        var qty = 12
        var marketValue: Decimal = Decimal(string: "1234.5600")!
        var changeToday: Double = 0.1
        var exchangeRate: Double? = nil
        var lastTradeAt = Date(timeIntervalSince1970: 1_764_322_200.75)
        var side: String? = "long"
        @NullEncoded var closedAt: Date?
        var tags: [String] = []
        var lots = [[1, 2], [], [3]]
        var latestQuotes = ["MSFT": 2, "AAPL": 1, "someSymbol": 3, "Zed\"": 4]
        var links = URL(string: "https://example.com/a/b?c=d")!
        var nothing = Empty()
        var merged = Merged()
    }

    struct Empty: Encodable {}

    /// Fields from two containers of one value, and nested containers, as hand-written
    /// `encode(to:)` implementations use them.
    struct Merged: Encodable {
        enum Keys: String, CodingKey { case first, second, nestedObject, nestedList }
        enum Inner: String, CodingKey { case deep }
        func encode(to encoder: any Encoder) throws {
            try Empty().encode(to: encoder)
            var one = encoder.container(keyedBy: Keys.self)
            try one.encode("a", forKey: .first)
            var object = one.nestedContainer(keyedBy: Inner.self, forKey: .nestedObject)
            try object.encode(true, forKey: .deep)
            var list = one.nestedUnkeyedContainer(forKey: .nestedList)
            try list.encode(1.5)
            try list.encodeNil()
            var two = encoder.container(keyedBy: Keys.self)
            try two.encode(2, forKey: .second)
        }
    }

    @Test("an answer says what Foundation's encoder said: numbers, decimals, dates, nulls, lists, dictionaries, nested and merged containers, with and without snake_case names")
    func sameJSON() throws {
        for snakeCase in [false, true] {
            let result = try same(Position(), snakeCase: snakeCase)
            #expect(result.equal, "\(result.ours)\n\(result.theirs)")
        }
        let text = try same(Position(), snakeCase: true).ours
        #expect(text.contains(#""asset_id":"a/1""#) && text.contains(#""last_trade_at":"2025-11-28T09:30:00Z""#), "\(text)")
        #expect(!text.contains("exchange_rate") && text.contains(#""closed_at":null"#) && text.contains(#""nothing":{}"#), "\(text)")
    }

    @Test("fields keep their declared order and a dictionary's keys are sorted and never converted, so an answer is always the same bytes")
    func order() throws {
        let text = String(decoding: try StreamingJSONEncoder(snakeCase: true).encode(Position()), as: UTF8.self)
        #expect(text.hasPrefix(#"{"symbol":"BRK.B","asset_id":"a/1","qty":12,"market_value":1234.56,"change_today":0.1,"#), "\(text)")
        #expect(text.contains(#""latest_quotes":{"AAPL":1,"MSFT":2,"Zed\"":4,"someSymbol":3}"#), "\(text)")
        #expect(text.contains(#""merged":{"first":"a","nested_object":{"deep":true},"nested_list":[1.5,null],"second":2}"#), "\(text)")
    }

    @Test("strings, numbers and dates are the very bytes Foundation writes")
    func scalars() throws {
        let ours = StreamingJSONEncoder(), theirs = Self.foundation()
        var strings = ["", "plain", "a/b", "quote \" and \\ backslash", "tab\tline\nfeed\r", "é ü 李 🚀", "\u{7F}\u{2028}"]
        strings.append(String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }))
        for string in strings {
            #expect(try ours.encode(string) == Array(try theirs.encode(string)), "\(string.debugDescription)")
        }
        for number in [0, 1, -1, 42, Int.max, Int.min] {
            #expect(try ours.encode(number) == Array(try theirs.encode(number)))
        }
        for number in [0.0, 1.0, -2.5, 0.1, 1e-7, 123_456_789.125, 1e21, 5e-324, Double.greatestFiniteMagnitude] {
            #expect(try ours.encode(number) == Array(try theirs.encode(number)), "\(number)")
        }
        #expect(try ours.encode(Float(0.3)) == Array(try theirs.encode(Float(0.3))))
        for text in ["0", "-1.5", "1234.5600", "0.000001", "99999999999999999999.99"] {
            let decimal = Decimal(string: text)!
            #expect(try ours.encode(decimal) == Array(try theirs.encode(decimal)), "\(text)")
        }
        #expect(throws: EncodingError.self) { try ours.encode(Double.nan) }
        var seed: UInt64 = 7
        for _ in 0..<3_000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let seconds = Double(Int64(seed >> 31) - (1 << 32)) + Double(seed & 0xFFFF) / 65_536
            let date = Date(timeIntervalSince1970: seconds)
            #expect(try ours.encode(date) == Array(try theirs.encode(date)), "\(seconds)")
        }
    }

    @Test("snake_case names are Foundation's conversion, for the answers' names and for any ASCII name")
    func snakeCase() {
        var names = ["a", "A", "id", "assetID", "AAPL", "S1", "URLString", "latestTrade", "unrealizedIntradayPlpc", "lastdayPrice",
                     "buyingPowerURL", "x2Y", "already_snake", "_leading", "trailing_", "ABCdef", "aBC", "a1B2c3", "HTTP2Server"]
        var seed: UInt64 = 11
        let alphabet = Array("aAbBzZ09_xXY".utf8)
        for _ in 0..<2_000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            names.append(String(decoding: (0..<Int(seed % 9 + 1)).map { alphabet[Int((seed >> (8 + $0 * 4)) % UInt64(alphabet.count))] },
                                as: UTF8.self))
        }
        for name in names {
            var bytes: [UInt8] = []
            #expect(SnakeCase.write(name, into: &bytes))
            #expect(String(decoding: bytes, as: UTF8.self) == "\"\(SnakeCase.foundation(name))\"", "\(name)")
        }
        var bytes: [UInt8] = []
        #expect(!SnakeCase.write("café", into: &bytes) && bytes.isEmpty)
    }
}
