import Foundation
import Hummingbird
import Postgres

/// An instrument's price at a moment, as a quote provider gives it.
public struct PriceQuote: Sendable, Equatable {
    public let symbol: String
    public let price: Decimal
    /// The previous day's close; `nil` when unknown (the change is then zero).
    public let previousClose: Decimal?
    public let asOf: Date

    public init(symbol: String, price: Decimal, previousClose: Decimal?, asOf: Date) {
        self.symbol = symbol
        self.price = price
        self.previousClose = previousClose
        self.asOf = asOf
    }
}

/// One symbol's prices stored within a minute (`minute_bars`, kept by the trigger on
/// `quotes`): `ticks` is how many prices were stored.
struct MinuteBar: Sendable, Equatable {
    let symbol: String
    let minute: Date
    let open: Decimal
    let high: Decimal
    let low: Decimal
    let close: Decimal
    let ticks: Int

    /// (high + low + close) / 3 to four decimals: what a bar without volume gives as its
    /// volume-weighted price.
    var typicalPrice: Decimal { ((high + low + close) / 3).rounded(4) }
}

/// A quote as clients see it (openapi.yaml `Quote`).
struct Quote: ResponseEncodable, Equatable {
    let symbol: String
    let name: String
    let price: String
    let previousClose: String
    let change: String
    let changePercent: String
    let asOf: Date

    init(name: String, quote: PriceQuote) {
        let previous = quote.previousClose ?? quote.price
        let change = quote.price - previous
        symbol = Symbol.shown(quote.symbol)
        self.name = name
        price = quote.price.moneyString
        previousClose = previous.moneyString
        self.change = change.moneyString
        changePercent = (previous == 0 ? Decimal(0) : change / previous * 100).rounded(2).moneyString
        asOf = quote.asOf
    }
}

/// A stock's page (openapi.yaml `StockDetail`): the quote's fields and more.
struct StockDetail: ResponseEncodable {
    let quote: Quote
    let description: String
    let sector: String
    let currency: String
    /// Null without history; the contract lists every field.
    @NullEncoded var yearChangePercent: String?
    @NullEncoded var yearHigh: String?
    @NullEncoded var yearLow: String?

    private enum CodingKeys: String, CodingKey {
        case description, sector, currency, yearChangePercent, yearHigh, yearLow
    }

    func encode(to encoder: any Encoder) throws {
        try quote.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(description, forKey: .description)
        try container.encode(sector, forKey: .sector)
        try container.encode(currency, forKey: .currency)
        try container.encode(_yearChangePercent, forKey: .yearChangePercent)
        try container.encode(_yearHigh, forKey: .yearHigh)
        try container.encode(_yearLow, forKey: .yearLow)
    }
}

struct QuotePage: ResponseEncodable {
    let items: [Quote]
    let total: Int
}

struct Movers: ResponseEncodable {
    let winners: [Quote]
    let losers: [Quote]
}

struct Chart: ResponseEncodable {
    struct Point: Encodable {
        let date: String
        let open: String?
        let high: String?
        let low: String?
        let close: String
        let volume: Int
    }

    let symbol: String
    let range: String
    /// How the prices are adjusted for splits and dividends.
    let adjusted: AdjustedHistory
    let points: [Point]
}

/// A decimal in a JSON body: a string such as `"187.43"` or a plain number, never
/// passed through binary floating point.
struct DecimalInput: Decodable, Sendable {
    let value: Decimal

    /// A value the server already holds, checked again like a sent one.
    init(_ value: Decimal) {
        self.value = value
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Decimal(exactly: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a decimal number")
            }
            self.value = value
        } else {
            value = try container.decode(Decimal.self)
        }
    }
}

extension Decimal {
    /// Parses `-?digits(.digits)?` only: no exponents, spaces, locales or `NaN`.
    init?(exactly text: String) {
        var body = Substring(text)
        if body.first == "-" { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            body.count <= 40, let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        self = value
    }

    /// Plain decimal notation with at least two fraction digits: `"10000.00"`, `"187.4312"`.
    var moneyString: String { plainText(minimumFractionDigits: 2) }

    /// Plain decimal notation exactly as `description` writes it (`"187.4312"`, `"-0.5"`,
    /// `"1500"`, `"0"`), without its digit-by-digit long division when the digits fit in
    /// 64 bits: `description` took 4–5 µs a value, most of the server's CPU answering a
    /// portfolio of 50 holdings. Other values (more than 19 digits) take `description`.
    var plainText: String { plainText(minimumFractionDigits: 0) }

    /// The text written as bytes (String's Character-wise searches and inserts cost more
    /// than the digits): `-0` is `0`, and with `minimumFractionDigits` a value
    /// has at least that many fraction digits.
    private func plainText(minimumFractionDigits: Int) -> String {
        let significand = significand
        var digits = NSDecimalNumber(decimal: significand).uint64Value
        var exponent = exponent
        guard !isNaN, Decimal(digits) == significand, (-40...40).contains(exponent) else {
            return minimumFractionDigits == 0 ? description : Self.padded(description, minimumFractionDigits)
        }
        while exponent < 0 && digits % 10 == 0 {
            digits /= 10
            exponent += 1
        }
        if digits == 0 { exponent = 0 }
        let negative = sign == .minus && digits != 0
        var count = 1, rest = digits / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        let places = max(0, -exponent)
        // At most 20 digits, 40 zeros either side, a sign, a point and the padding; written
        // on the stack, so that a text of up to 15 bytes (most amounts) is a small string,
        // kept inline without an allocation.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64 + 40) { out in
            var written = 0
            func put(_ byte: UInt8) {
                out[written] = byte
                written += 1
            }
            /// The significand's digits, most significant first.
            func putDigits() {
                var index = written + count - 1
                var rest = digits
                for _ in 0..<count {
                    out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                    index -= 1
                }
                written += count
            }
            if negative { put(UInt8(ascii: "-")) }
            if places >= count {
                put(UInt8(ascii: "0"))
                put(UInt8(ascii: "."))
                for _ in 0..<(places - count) { put(UInt8(ascii: "0")) }
                putDigits()
            } else {
                putDigits()
                if places > 0 {
                    // Move the last `places` digits one right for the point.
                    for index in stride(from: written - 1, through: written - places, by: -1) { out[index + 1] = out[index] }
                    out[written - places] = UInt8(ascii: ".")
                    written += 1
                }
                for _ in 0..<max(0, exponent) { put(UInt8(ascii: "0")) }
            }
            if places < minimumFractionDigits {
                if places == 0 { put(UInt8(ascii: ".")) }
                for _ in places..<minimumFractionDigits { put(UInt8(ascii: "0")) }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: out[..<written]), as: UTF8.self)
        }
    }

    /// `text` (plain notation) with at least `fractionDigits` fraction digits; `-0` is `0`.
    private static func padded(_ text: String, _ fractionDigits: Int) -> String {
        let text = text == "-0" ? "0" : text
        guard let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) else {
            return text + "." + String(repeating: "0", count: fractionDigits)
        }
        let have = text.utf8.distance(from: dot, to: text.utf8.endIndex) - 1
        return have < fractionDigits ? text + String(repeating: "0", count: fractionDigits - have) : text
    }

    /// Rounded to `scale` decimals, half away from zero unless `mode` says otherwise
    /// (`.up` and `.down` round toward larger and smaller values).
    func rounded(_ scale: Int, _ mode: NSDecimalNumber.RoundingMode = .plain) -> Decimal {
        var value = self
        var result = Decimal()
        NSDecimalRound(&result, &value, scale, mode)
        return result
    }
}

/// What the market refuses or cannot do.
enum MarketError: Error, Equatable {
    case unknownSymbol(String)
    /// A known instrument without any price yet.
    case noPrice(String)
    /// The price source cannot answer and the last known price is too old.
    case sourceUnavailable(String)
}

/// How history is adjusted for corporate actions (`adjusted_bars` in SQL).
enum AdjustedHistory: String, Codable, Sendable, PostgresCodable, CaseIterable {
    /// Prices divided by the splits since: no cliff at a split.
    case split
    /// Also scaled for the dividends since: the total-return series.
    case total
    /// The prices as traded.
    case none
}

/// `GET /api/market/clock`: the clock's fields (whether the market is open, its next open
/// and close), and the days of stored daily prices (null when there are none).
struct MarketClockBody: ResponseEncodable {
    let clock: MarketHours.Clock
    @NullEncoded var history: PriceHistorySpan?

    private enum CodingKeys: String, CodingKey { case history }

    func encode(to encoder: any Encoder) throws {
        try clock.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(_history, forKey: .history)
    }
}

/// The first and last day of the market's price history players may see.
struct PriceHistorySpan: Codable, Sendable {
    let from: String
    let through: String
}
