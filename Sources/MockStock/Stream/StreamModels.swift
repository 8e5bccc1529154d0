import Foundation
import NIOCore

/// An encoded event: made once, and the same bytes go to every connection it is for.
typealias StreamMessage = ByteBuffer

/// A message a client sends on the stream (openapi.yaml, `/api/stream`).
struct StreamRequest: Decodable {
    enum Action: String, Decodable {
        case auth, subscribe, unsubscribe, ping
    }

    let action: Action
    let token: String?
    let quotes: [String]?
    let orders: Bool?
    let notifications: Bool?
    let leagues: [Int]?
    /// The scenario league whose market `quotes` names (its members'); nil: the real market.
    var leagueId: Int? = nil
}

/// What one connection follows.
struct StreamSubscriptions: Sendable, Equatable {
    var quotes: Set<String> = []
    /// Every symbol's prices (Alpaca's market-data stream's `"*"`).
    var allQuotes = false
    /// Symbols whose finished minute bars are sent (Alpaca's market-data stream).
    var bars: Set<String> = []
    var allBars = false
    var orders = false
    var notifications = false
    var leagues: Set<Int> = []

    /// At most this many symbols and leagues per connection, which bounds its quote queue.
    static let maxQuotes = 100
    static let maxLeagues = 20
}

/// A stored price on its way to the connections that follow its symbol: this stream's
/// `quote` event (`message`), and the price for connections of another protocol.
struct PublishedQuote: Sendable {
    let symbol: String
    let quote: PriceQuote
    let message: StreamMessage
}

/// One event as it goes on the wire: `{"type": ..., "data": ...}`, where `data` has the
/// shape the REST API gives the same thing.
struct StreamEnvelope<Payload: Encodable>: Encodable {
    let type: String
    let data: Payload
}

/// The first message after a (re)subscription: the current state of what was asked for,
/// so that the events after it are changes to something the client already has.
struct StreamSnapshot: Encodable {
    var quotes: [Quote]?
    var orders: [Order]?
    var unreadNotifications: Int?
    var standings: [LeagueStandings]?
}

/// A league's leaderboard top, as a `standings` event carries it.
struct LeagueStandings: Encodable, Sendable {
    let leagueId: Int
    let items: [Standing]
    let total: Int
    let asOf: Date
}

/// A problem with a client's message, as an `error` event carries it (the problem+json
/// fields that make sense without HTTP).
struct StreamProblem: Encodable {
    let code: String
    let detail: String
}

/// Encodes events the way the REST API encodes bodies (sorted keys, RFC 3339 dates in UTC).
enum StreamEncoding {
    /// Dates carry milliseconds: a live price is newer than another within a second.
    static func message<Payload: Encodable>(_ type: String, _ data: Payload) -> StreamMessage {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(time(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every event type is plain data that always encodes.
        let bytes = (try? encoder.encode(StreamEnvelope(type: type, data: data))) ?? Data("{}".utf8)
        return ByteBuffer(bytes: bytes)
    }

    /// A moment as the streams write it: RFC 3339 in UTC with milliseconds.
    static func time(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }

    /// Appends `messages` as unmasked, unfragmented WebSocket text (or binary) frames
    /// (RFC 6455 §5.2): a server's frames need no mask, so each is a 2-, 4- or 10-byte
    /// header and the message. One buffer for a whole batch is one write for the socket,
    /// instead of a write (and a header buffer) per frame through `WebSocketFrameEncoder`.
    static func frames(_ messages: [StreamMessage], binary: Bool = false, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: messages.reduce(0) { $0 + $1.readableBytes + 10 })
        for message in messages {
            buffer.writeInteger(UInt8(binary ? 0x82 : 0x81))  // FIN, binary or text
            switch message.readableBytes {
            case ..<126:
                buffer.writeInteger(UInt8(message.readableBytes))
            case ..<65_536:
                buffer.writeInteger(UInt8(126))
                buffer.writeInteger(UInt16(message.readableBytes))
            default:
                buffer.writeInteger(UInt8(127))
                buffer.writeInteger(UInt64(message.readableBytes))
            }
            buffer.writeImmutableBuffer(message)
        }
        return buffer
    }

    static let authorized = ByteBuffer(string: #"{"type":"authorized"}"#)
    static let pong = ByteBuffer(string: #"{"type":"pong"}"#)
    /// Sent when events may have been lost (the database connection broke); a snapshot follows.
    static let gap = ByteBuffer(string: #"{"type":"gap"}"#)
}

/// One announced change of an order: the status it took (`announced`), whether it was
/// written with it, the order as it is when the announcement is delivered (perhaps changed
/// again since), and after a fill, the portfolio's position in the symbol.
struct OrderChange: Sendable {
    let order: Order
    let announced: OrderStatus
    /// Written with this status (a market order filled at once, a refusal), never `new` before.
    let inserted: Bool
    let positionQuantity: Int?
    /// The shares of the fill announced (`filled`, `partiallyFilled`).
    var fillQuantity: Int? = nil

    /// Whether the order still has the status announced.
    var isCurrent: Bool { order.status == announced }
}
