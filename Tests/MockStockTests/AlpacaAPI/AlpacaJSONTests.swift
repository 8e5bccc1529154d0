import Foundation
@testable import MockStock
import Testing

@Suite("Alpaca JSON")
struct AlpacaJSONTests {
    struct Sample: Encodable {
        var accountNumber = "PA1"
        var unrealizedIntradayPlpc = "0.01"
        var assetID = "a1"
        var lastdayPrice = "10.00"
        var buyingPowerURL = "/x"
        var latestQuotes = ["AAPL": 1, "BRK.B": 2, "someSymbol": 3]
        var items = [Item()]
    }

    struct Item: Encodable {
        var filledAvgPrice = 1
    }

    @Test("/v2 answers name every field, nested or keyed by symbol, as Foundation's snake_case conversion does, and market-data snapshots keep camelCase")
    func snakeCaseKeys() throws {
        let reference = JSONEncoder()
        reference.keyEncodingStrategy = .convertToSnakeCase
        reference.dateEncodingStrategy = .iso8601
        reference.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let answer = try StreamingJSONEncoder(snakeCase: true).encode(Sample())
        #expect(try StreamingJSONEncoderTests.canonical(answer) == StreamingJSONEncoderTests.canonical(Array(reference.encode(Sample()))))
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.contains(#""account_number":"PA1""#) && text.contains(#""unrealized_intraday_plpc""#)
            && text.contains(#""filled_avg_price":1"#) && text.contains(#""latest_quotes":{"AAPL":1,"BRK.B":2,"someSymbol":3}"#),
            "\(text)")
        // Market-data snapshots keep their camelCase keys.
        #expect(String(decoding: try StreamingJSONEncoder().encode(Sample()), as: UTF8.self).contains(#""accountNumber""#))
    }

    @Test("a position writes, field by field and in order, what its Encodable conformance writes, the names Foundation's snake_case conversion gives")
    func positionFields() throws {
        /// The position through its synthesized `encode(to:)`, not its own writer.
        struct ViaEncodable: Encodable {
            let position: AlpacaPosition
            func encode(to encoder: any Encoder) throws { try position.encode(to: encoder) }
        }
        let positions = [
            AlpacaPosition(assetId: "a\"1\\", symbol: "BRK.B", avgEntryPrice: "10.00", qty: "-3", side: "short",
                           marketValue: "-30.00", costBasis: "-30.00", unrealizedPl: "0.00", unrealizedPlpc: "0",
                           unrealizedIntradayPl: "-1.50", unrealizedIntradayPlpc: "-0.05", currentPrice: "10.00",
                           lastdayPrice: "9.5000", changeToday: "0.052632"),
            AlpacaPosition(assetId: "b", symbol: "S1", avgEntryPrice: "1", qty: "1", side: "long", marketValue: "1", costBasis: "1",
                           unrealizedPl: "0", unrealizedPlpc: "0", unrealizedIntradayPl: "0", unrealizedIntradayPlpc: "0",
                           currentPrice: "1", lastdayPrice: "1", changeToday: "0"),
        ]
        let ours = StreamingJSONEncoder(snakeCase: true)
        let written = try ours.encode(positions)
        #expect(written == (try ours.encode(positions.map(ViaEncodable.init))), "\(String(decoding: written, as: UTF8.self))")
        let reference = JSONEncoder()
        reference.keyEncodingStrategy = .convertToSnakeCase
        reference.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(try StreamingJSONEncoderTests.canonical(written) == StreamingJSONEncoderTests.canonical(Array(reference.encode(positions))))
        #expect(String(decoding: written, as: UTF8.self).hasPrefix(#"[{"asset_id":"a\"1\\","symbol":"BRK.B","exchange":"NYSE","asset_class":"us_equity","asset_marginable":false,"#))
    }

    @Test("a position's rates are the exact quotient to six decimals, written as Alpaca writes them")
    func rates() {
        #expect(AlpacaPosition.rate(Decimal(string: "12.34")!, over: 1000) == "0.01234")
        #expect(AlpacaPosition.rate(-1, over: 2) == "-0.5")
        #expect(AlpacaPosition.rate(-1, over: -2) == "-0.5")
        #expect(AlpacaPosition.rate(1, over: 3) == "0.333333")
        #expect(AlpacaPosition.rate(2, over: 3) == "0.666667")
        #expect(AlpacaPosition.rate(150, over: 100) == "1.5")
        #expect(AlpacaPosition.rate(-2000, over: 1000) == "-2")
        #expect(AlpacaPosition.rate(1, over: 3_000_000) == "0")
        #expect(AlpacaPosition.rate(0, over: 5) == "0")
        #expect(AlpacaPosition.rate(5, over: 0) == "0")
        // Against the exact decimal quotient, over a fixed spread of amounts in cents.
        var seed: UInt64 = 42
        func next() -> Int64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int64(seed >> 34) - (1 << 29)
        }
        for _ in 0..<2_000 {
            let part = Decimal(next()) / 100, whole = Decimal(next() / 7) / 100
            guard whole != 0 else { continue }
            var exact = part / abs(whole), rounded = Decimal()
            NSDecimalRound(&rounded, &exact, 6, .plain)
            #expect(AlpacaPosition.rate(part, over: whole) == "\(rounded)", "\(part) / \(whole)")
        }
    }
}
