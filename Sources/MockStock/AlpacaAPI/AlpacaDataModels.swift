import Foundation
import HummingbirdWebSocket
import NIOCore

/// One message of Alpaca's market-data stream (`/v2/iex`, `/v2/sip`), written as JSON or
/// msgpack. Prices are exact in JSON (a number written from the decimal's digits); in
/// msgpack they are 64-bit floats, as Alpaca sends them: the nearest double to the price,
/// which every client reads back as the same two- or four-decimal figure. Times are RFC
/// 3339 text in JSON and msgpack's timestamp extension in msgpack, as alpaca-py expects.
enum AlpacaDataMessage: Sendable, Equatable {
    case success(String)
    case error(Int, String)
    case subscription(AlpacaDataStreamController.Channels)
    /// A stored price as a trade of one share at it.
    case trade(PriceQuote)
    /// A stored price as a quote: bid and ask both at it, one share each.
    case quote(PriceQuote)
    /// A finished minute's bar.
    case bar(MinuteBar)

    enum Format: Sendable {
        case json
        case msgpack
    }

    /// A field's value.
    enum Field: Sendable {
        case text(String)
        case int(Int64)
        case price(Decimal)
        case texts([String])
        case time(Date)
    }

    /// Alpaca's other channels, which a subscription may name and which carry nothing here.
    static let emptyChannels = ["updatedBars", "dailyBars", "statuses", "lulds", "corrections", "cancelErrors"]

    /// The exchange and tape every price is reported on: the game's own ("V" is IEX's code,
    /// the feed alpaca-py's default asks for).
    static let exchange = "V"
    static let tape = "C"

    var fields: [(String, Field)] {
        switch self {
        case .success(let message):
            return [("T", .text("success")), ("msg", .text(message))]
        case .error(let code, let message):
            return [("T", .text("error")), ("code", .int(Int64(code))), ("msg", .text(message))]
        case .subscription(let channels):
            // The channels the game has no data for are listed empty, as Alpaca lists them:
            // clients keep the reply's lists as their own.
            return [("T", .text("subscription")), ("trades", .texts(channels.trades.listed)),
                    ("quotes", .texts(channels.quotes.listed)), ("bars", .texts(channels.bars.listed))]
                + Self.emptyChannels.map { ($0, .texts([])) }
        case .trade(let quote):
            return [("T", .text("t")), ("S", .text(Symbol.shown(quote.symbol))), ("i", .int(Self.tradeID(quote.asOf))),
                    ("x", .text(Self.exchange)), ("p", .price(quote.price)), ("s", .int(1)), ("c", .texts(["@"])),
                    ("t", .time(quote.asOf)), ("z", .text(Self.tape))]
        case .quote(let quote):
            return [("T", .text("q")), ("S", .text(Symbol.shown(quote.symbol))), ("bx", .text(Self.exchange)), ("bp", .price(quote.price)),
                    ("bs", .int(1)), ("ax", .text(Self.exchange)), ("ap", .price(quote.price)), ("as", .int(1)),
                    ("c", .texts(["R"])), ("t", .time(quote.asOf)), ("z", .text(Self.tape))]
        case .bar(let bar):
            return [("T", .text("b")), ("S", .text(Symbol.shown(bar.symbol))), ("o", .price(bar.open)), ("h", .price(bar.high)),
                    ("l", .price(bar.low)), ("c", .price(bar.close)), ("v", .int(0)), ("t", .time(bar.minute)),
                    ("n", .int(Int64(bar.ticks))), ("vw", .price(bar.typicalPrice))]
        }
    }

    /// A trade's id: its time in microseconds since 1970, the same on every process.
    static func tradeID(_ asOf: Date) -> Int64 {
        Int64((asOf.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// The messages as one array, the way every server message of this stream goes out.
    static func encode(_ messages: [AlpacaDataMessage], _ format: Format) -> ByteBuffer {
        switch format {
        case .msgpack:
            var writer = MessagePack.Writer()
            writer.array(count: messages.count)
            for message in messages {
                let fields = message.fields
                writer.map(count: fields.count)
                for (name, value) in fields {
                    writer.string(name)
                    switch value {
                    case .text(let text): writer.string(text)
                    case .int(let number): writer.int(number)
                    case .price(let price): writer.double(NSDecimalNumber(decimal: price).doubleValue)
                    case .texts(let texts):
                        writer.array(count: texts.count)
                        for text in texts { writer.string(text) }
                    case .time(let date):
                        let seconds = date.timeIntervalSince1970.rounded(.down)
                        let nanoseconds = UInt32(min(999_999_999, max(0, ((date.timeIntervalSince1970 - seconds) * 1e9).rounded())))
                        writer.timestamp(seconds: Int64(seconds), nanoseconds: nanoseconds)
                    }
                }
            }
            return writer.buffer
        case .json:
            var out = JSONBytes()
            out.byte(UInt8(ascii: "["))
            for (index, message) in messages.enumerated() {
                if index > 0 { out.byte(UInt8(ascii: ",")) }
                out.byte(UInt8(ascii: "{"))
                for (position, (name, value)) in message.fields.enumerated() {
                    if position > 0 { out.byte(UInt8(ascii: ",")) }
                    out.string(name)
                    out.byte(UInt8(ascii: ":"))
                    switch value {
                    case .text(let text): out.string(text)
                    case .int(let number): out.integer(number)
                    case .price(let price): out.ascii(price.plainText)
                    case .texts(let texts):
                        out.byte(UInt8(ascii: "["))
                        for (item, text) in texts.enumerated() {
                            if item > 0 { out.byte(UInt8(ascii: ",")) }
                            out.string(text)
                        }
                        out.byte(UInt8(ascii: "]"))
                    case .time(let date):
                        out.string(StreamEncoding.time(date))
                    }
                }
                out.byte(UInt8(ascii: "}"))
            }
            out.byte(UInt8(ascii: "]"))
            return ByteBuffer(bytes: out.bytes)
        }
    }

    /// A client's message: one object, msgpack or JSON, as a map; nil when it is neither.
    static func request(_ message: WebSocketMessage) -> [String: MessagePack.Value]? {
        switch message {
        case .binary(let buffer):
            if let value = try? MessagePack.decode(buffer.readableBytesView) { return value.map }
            return json(Data(buffer: buffer))
        case .text(let text):
            return json(Data(text.utf8))
        }
    }

    private static func json(_ data: Data) -> [String: MessagePack.Value]? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object.mapValues(value)
    }

    private static func value(_ any: Any) -> MessagePack.Value {
        switch any {
        case let text as String: .string(text)
        case let items as [Any]: .array(items.map(value))
        case let fields as [String: Any]: .map(fields.mapValues(value))
        case let number as NSNumber: .double(number.doubleValue)
        default: .nil
        }
    }
}
