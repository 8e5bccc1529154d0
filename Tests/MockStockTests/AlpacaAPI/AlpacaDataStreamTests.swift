import Foundation
@testable import MockStock
import NIOCore
import Prometheus
import Testing

@Suite("Alpaca market-data stream")
struct AlpacaDataStreamTests {
    @Test("msgpack: each format this stream writes is the specification's bytes, and reads back")
    func messagePackWrites() throws {
        var writer = MessagePack.Writer()
        writer.array(count: 9)
        writer.int(5)  // positive fixint
        writer.int(-3)  // negative fixint
        writer.int(200)  // int16 (0xcc is unsigned: ints are written signed)
        writer.int(-40_000)  // int32
        writer.int(1_700_000_000_123_456)  // int64
        writer.string("T")  // fixstr
        writer.double(101.25)
        writer.nil()
        writer.timestamp(seconds: 1_700_000_000, nanoseconds: 5)
        let bytes = Array(writer.buffer.readableBytesView)
        #expect(bytes[0] == 0x99)
        #expect(Array(bytes[1...2]) == [0x05, 0xfd])
        #expect(Array(bytes[3...5]) == [0xd1, 0x00, 0xc8])
        #expect(Array(bytes[6...10]) == [0xd2, 0xff, 0xff, 0x63, 0xc0])
        #expect(Array(bytes[11...19]) == [0xd3, 0x00, 0x06, 0x0a, 0x24, 0x18, 0x20, 0x22, 0x40])
        #expect(Array(bytes[20...21]) == [0xa1, 0x54])
        #expect(Array(bytes[22...30]) == [0xcb, 0x40, 0x59, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00], "101.25 as a big-endian IEEE double")
        #expect(bytes[31] == 0xc0)
        #expect(Array(bytes[32...34]) == [0xc7, 12, 0xff], "ext 8, 12 bytes, type -1")
        #expect(Array(bytes[35...38]) == [0, 0, 0, 5], "nanoseconds first")
        #expect(Array(bytes[39...46]) == [0, 0, 0, 0, 0x65, 0x53, 0xf1, 0x00], "then the seconds")
        #expect(try MessagePack.decode(bytes) == .array([
            .int(5), .int(-3), .int(200), .int(-40_000), .int(1_700_000_000_123_456), .string("T"), .double(101.25), .nil,
            .timestamp(seconds: 1_700_000_000, nanoseconds: 5),
        ]))
    }

    @Test("msgpack: what clients send is read — maps, str8, uint, float32, the 32- and 64-bit timestamps — and garbage is refused")
    func messagePackReads() throws {
        // {"action":"subscribe","trades":["AAPL"]} as Python's msgpack writes it.
        let subscribe: [UInt8] = [0x82, 0xa6] + Array("action".utf8) + [0xa9] + Array("subscribe".utf8)
            + [0xa6] + Array("trades".utf8) + [0x91, 0xa4] + Array("AAPL".utf8)
        #expect(try MessagePack.decode(subscribe) == .map(["action": .string("subscribe"), "trades": .array([.string("AAPL")])]))
        let long = String(repeating: "k", count: 40)
        #expect(try MessagePack.decode([0xd9, 40] + Array(long.utf8)) == .string(long))
        #expect(try MessagePack.decode([0xcd, 0x01, 0x00]) == .int(256))
        #expect(try MessagePack.decode([0xca, 0x3f, 0xc0, 0x00, 0x00]) == .double(1.5))
        #expect(try MessagePack.decode([0xd6, 0xff, 0x65, 0x53, 0xf1, 0x00]) == .timestamp(seconds: 1_700_000_000, nanoseconds: 0))
        // 64-bit form: 30 bits of nanoseconds (7) above 34 bits of seconds.
        let both = UInt64(7) << 34 | 1_700_000_000
        #expect(try MessagePack.decode([0xd7, 0xff] + (0..<8).map { UInt8(truncatingIfNeeded: both >> (56 - 8 * $0)) })
            == .timestamp(seconds: 1_700_000_000, nanoseconds: 7))
        for garbage: [UInt8] in [[0xc1], [0xa5, 0x41], [0xde, 0xff, 0xff], [0x91], [0x05, 0x05], Array(repeating: 0x91, count: 40) + [0xc0],
                                 [0xa2, 0xff, 0xfe], [0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]] {
            #expect(throws: MessagePack.Malformed.self, "\(garbage.prefix(6))") { try MessagePack.decode(garbage) }
        }
    }

    @Test("a price is a trade and a quote in Alpaca's fields; a bar's volume-weighted price is its typical price; JSON writes prices exactly")
    func messages() throws {
        let asOf = Date(timeIntervalSince1970: 1_700_000_000.25)
        let quote = PriceQuote(symbol: "AAPL", price: Decimal(string: "171.05")!, previousClose: nil, asOf: asOf)
        let json = String(buffer: AlpacaDataMessage.encode([.trade(quote), .quote(quote)], .json))
        #expect(json == #"[{"T":"t","S":"AAPL","i":1700000000250000,"x":"V","p":171.05,"s":1,"c":["@"],"t":"2023-11-14T22:13:20.250Z","z":"C"},"#
            + #"{"T":"q","S":"AAPL","bx":"V","bp":171.05,"bs":1,"ax":"V","ap":171.05,"as":1,"c":["R"],"t":"2023-11-14T22:13:20.250Z","z":"C"}]"#)
        let bar = MinuteBar(symbol: "AMD", minute: Date(timeIntervalSince1970: 1_700_000_040), open: 100, high: Decimal(string: "102.5")!,
                            low: Decimal(string: "99.75")!, close: 101, ticks: 3)
        #expect(bar.typicalPrice == Decimal(string: "101.0833"), "(102.5 + 99.75 + 101) / 3")
        let packed = try MessagePack.decode(AlpacaDataMessage.encode([.bar(bar)], .msgpack).readableBytesView)
        let fields = try #require(packed.array?.first?.map)
        #expect(fields["T"] == .string("b") && fields["S"] == .string("AMD"))
        #expect(fields["h"] == .double(102.5) && fields["l"] == .double(99.75) && fields["n"] == .int(3) && fields["v"] == .int(0))
        #expect(fields["t"] == .timestamp(seconds: 1_700_000_040, nanoseconds: 0))
    }

    @Test("the hub sends every price to a socket following \"*\", bars only to sockets following them, each in its own rendering")
    func hubFansOutToMarketDataSockets() {
        let hub = StreamHub(metrics: StreamMetrics(registry: PrometheusCollectorRegistry()), queueLimit: 10)
        let everything = hub.connect(userID: 1, tokenVersion: .max, marketData: .init(
            price: { ByteBuffer(string: "price \($0.symbol)") }, bar: { ByteBuffer(string: "bar \($0.symbol)") }, binary: true
        ))
        let game = hub.connect(userID: 2, tokenVersion: 0)
        hub.update(everything, to: StreamSubscriptions(allQuotes: true, bars: ["AMD"]))
        hub.update(game, to: StreamSubscriptions(quotes: ["AAPL"]))
        #expect(hub.followedSymbols(["AAPL", "ZZZ"]) == ["AAPL", "ZZZ"], "a socket follows every symbol")
        #expect(hub.followedBars() == ["AMD"])
        func published(_ symbol: String) -> PublishedQuote {
            PublishedQuote(symbol: symbol, quote: PriceQuote(symbol: symbol, price: 1, previousClose: nil, asOf: Date()),
                           message: ByteBuffer(string: "quote \(symbol)"))
        }
        hub.publishQuotes([published("AAPL"), published("ZZZ")])
        let minute = Date(timeIntervalSince1970: 1_700_000_040)
        hub.publishBars([MinuteBar(symbol: "AMD", minute: minute, open: 1, high: 1, low: 1, close: 1, ticks: 1),
                         MinuteBar(symbol: "INTC", minute: minute, open: 1, high: 1, low: 1, close: 1, ticks: 1)])
        #expect(everything.takeBatch()?.map { String(buffer: $0) } == ["bar AMD", "price AAPL", "price ZZZ"])
        #expect(game.takeBatch()?.map { String(buffer: $0) } == ["quote AAPL"])
        hub.update(everything, to: StreamSubscriptions())
        #expect(hub.followedBars() == nil)
        #expect(hub.followedSymbols(["ZZZ"]).isEmpty)
    }
}
