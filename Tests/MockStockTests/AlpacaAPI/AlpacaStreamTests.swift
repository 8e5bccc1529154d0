import Foundation
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Testing
import TestSupport

extension StreamTestClient {
    /// Alpaca's trade-update socket (`/stream`), authenticated with a key and listening.
    static func tradeUpdates(port: Int, key: (keyID: String, secret: String)) async throws -> StreamTestClient {
        let client = StreamTestClient(port: port, path: "/stream")
        client.send(#"{"action":"authenticate","data":{"key_id":"\#(key.keyID)","secret_key":"\#(key.secret)"}}"#)
        client.send(#"{"action":"listen","data":{"streams":["trade_updates"]}}"#)
        try await client.waitFor { $0["stream"] as? String == "listening" }
        return client
    }

    /// The `trade_updates` events received so far, of the order with this id.
    func tradeUpdates(order id: String) -> [[String: any Sendable]] {
        events.compactMap { message in
            guard message["stream"] as? String == AlpacaStreamController.tradeUpdates,
                let data = message["data"] as? [String: any Sendable],
                (data["order"] as? [String: any Sendable])?["id"] as? String == id
            else { return nil }
            return data
        }
    }

    /// Waits up to 10 s until some message received satisfies `condition`.
    func waitFor(_ condition: @escaping ([String: any Sendable]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if events.contains(where: condition) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no such message within 10 s; received \(events)")
        throw CancellationError()
    }
}

@Suite("Bots: Alpaca's trade updates and single-symbol market data")
struct AlpacaStreamTests {
    /// Places an order through `/v2/orders` and returns its id.
    static func order(_ client: some TestClientProtocol, key: (keyID: String, secret: String), _ body: String) async throws -> String {
        let response = try await client.alpaca(.post, "/v2/orders", key: key, body: body)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        return try #require(object["id"] as? String)
    }

    @Test("an order filled as it arrives shows new then fill; a fill carries the position after it, down to zero")
    func newFirstAndPositionAfterFill() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true) { client in
                try await client.seedTradingMarket()
                let token = try await client.register("stream_bot").token
                let key = try await client.apiKey(token: token)
                let socket = try await StreamTestClient.tradeUpdates(port: try #require(client.port), key: key)

                let first = try await Self.order(client, key: key, #"{"symbol":"AAPL","qty":"3","side":"buy","type":"market","time_in_force":"day"}"#)
                try await socket.waitFor { _ in socket.tradeUpdates(order: first).count == 2 }
                let events = socket.tradeUpdates(order: first)
                #expect(events.map { $0["event"] as? String } == ["new", "fill"])
                let placed = try #require(events.first?["order"] as? [String: any Sendable])
                #expect(placed["status"] as? String == "new" && placed["filled_qty"] as? String == "0")
                #expect(events.first?["position_qty"] == nil)
                let fill = try #require(events.last)
                #expect(fill["position_qty"] as? String == "3" && fill["qty"] as? String == "3" && fill["price"] as? String == "150.00")
                #expect((fill["order"] as? [String: any Sendable])?["status"] as? String == "filled")

                let second = try await Self.order(client, key: key, #"{"symbol":"AAPL","qty":"2","side":"buy","type":"market","time_in_force":"day"}"#)
                try await socket.waitFor { _ in socket.tradeUpdates(order: second).count == 2 }
                #expect(socket.tradeUpdates(order: second).last?["position_qty"] as? String == "5")

                // A resting order: `new` when placed, `fill` when the price crosses it.
                let resting = try await Self.order(
                    client, key: key, #"{"symbol":"AAPL","qty":"5","side":"sell","type":"limit","limit_price":"151","time_in_force":"gtc"}"#
                )
                try await socket.waitFor { _ in socket.tradeUpdates(order: resting).count == 1 }
                try await client.setPrice("AAPL", "152.00")
                try await socket.waitFor { _ in socket.tradeUpdates(order: resting).count == 2 }
                let restingEvents = socket.tradeUpdates(order: resting)
                #expect(restingEvents.map { $0["event"] as? String } == ["new", "fill"])
                #expect(restingEvents.last?["position_qty"] as? String == "0")
                await socket.close()
            }
        }
    }

    @Test("a short's fill shows the position below zero; an order triggered or replaced shows each change once")
    func shortAndChangesInPlace() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true) { client in
                try await client.seedTradingMarket()
                let token = try await client.register("short_stream_bot").token
                let (_, portfolio) = try await client.leagueWithRules(#"{"allowShortSelling":true}"#, token: token)
                let key = try await client.apiKey(token: token, portfolioID: portfolio)
                let socket = try await StreamTestClient.tradeUpdates(port: try #require(client.port), key: key)

                let short = try await Self.order(client, key: key, #"{"symbol":"AAPL","qty":"2","side":"sell","type":"market","time_in_force":"day"}"#)
                try await socket.waitFor { _ in socket.tradeUpdates(order: short).count == 2 }
                #expect(socket.tradeUpdates(order: short).map { $0["event"] as? String } == ["new", "fill"])
                #expect(socket.tradeUpdates(order: short).last?["position_qty"] as? String == "-2")

                // A stop-limit whose stop is crossed but not its limit: triggered, still open, and not placed again.
                let stopLimit = try await Self.order(
                    client, key: key,
                    #"{"symbol":"AAPL","qty":"1","side":"buy","type":"stop_limit","stop_price":"160","limit_price":"155","time_in_force":"gtc"}"#
                )
                try await client.setPrice("AAPL", "161.00")
                try await client.setPrice("AAPL", "155.00")
                try await socket.waitFor { _ in socket.tradeUpdates(order: stopLimit).contains { $0["event"] as? String == "fill" } }
                #expect(socket.tradeUpdates(order: stopLimit).map { $0["event"] as? String } == ["new", "fill"])
                #expect(socket.tradeUpdates(order: stopLimit).last?["position_qty"] as? String == "-1")

                // A replacement: the old order is replaced once, the new one placed once.
                let resting = try await Self.order(client, key: key, #"{"symbol":"AAPL","qty":"1","side":"buy","type":"limit","limit_price":"100","time_in_force":"gtc"}"#)
                let replaced = try await client.alpaca(.patch, "/v2/orders/\(resting)", key: key, body: #"{"limit_price":"101"}"#)
                #expect(replaced.status == .ok, "\(String(buffer: replaced.body))")
                let replacement = try #require(try JSONSerialization.jsonObject(with: Data(buffer: replaced.body)) as? [String: Any])["id"] as! String
                // An order after both: once its `new` is here, everything before it is.
                let marker = try await Self.order(client, key: key, #"{"symbol":"AAPL","qty":"1","side":"buy","type":"limit","limit_price":"90","time_in_force":"gtc"}"#)
                try await socket.waitFor { _ in socket.tradeUpdates(order: marker).count == 1 }
                #expect(socket.tradeUpdates(order: resting).map { $0["event"] as? String } == ["new", "replaced"])
                #expect(socket.tradeUpdates(order: replacement).map { $0["event"] as? String } == ["new"])
                await socket.close()
            }
        }
    }

    @Test("each single-symbol route answers in Alpaca's single-symbol shape with the figures of the several-symbol route")
    func singleSymbolRoutes() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                // Two stored daily closes before today's price.
                let days = [-5, -4].map {
                    ISO8601DateFormatter.string(from: Date().addingTimeInterval(Double($0) * 86_400), timeZone: .gmt, formatOptions: .withFullDate)
                }
                let csv = "symbol,date,close\nAAPL,\(days[0]),140\nAAPL,\(days[1]),145\n"
                let admin = try await client.adminToken()
                #expect(try await client.send(.post, "/api/admin/prices", body: csv, contentType: "text/csv", token: admin).status == .ok)
                let key = try await client.apiKey(token: try await client.register("data_bot").token)
                func json(_ uri: String) async throws -> [String: Any] {
                    let response = try await client.alpaca(.get, uri, key: key)
                    #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
                    return try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                }
                let trade = try await json("/v2/stocks/aapl/trades/latest")
                #expect(trade["symbol"] as? String == "AAPL")
                #expect((trade["trade"] as? [String: Any])?["p"] as? Double == 150)
                let several = try await json("/v2/stocks/trades/latest?symbols=AAPL")
                #expect(NSDictionary(dictionary: trade["trade"] as? [String: Any] ?? [:])
                    == NSDictionary(dictionary: (several["trades"] as? [String: Any])?["AAPL"] as? [String: Any] ?? [:]))
                let quote = try await json("/v2/stocks/AAPL/quotes/latest?feed=iex")
                #expect((quote["quote"] as? [String: Any])?["ap"] as? Double == 150 && quote["symbol"] as? String == "AAPL")
                let bar = try await json("/v2/stocks/AAPL/bars/latest")
                #expect((bar["bar"] as? [String: Any])?["c"] as? Double == 145 && bar["symbol"] as? String == "AAPL")
                let bars = try await json("/v2/stocks/AAPL/bars?timeframe=1Day")
                #expect(bars["symbol"] as? String == "AAPL")
                let closes = (bars["bars"] as? [[String: Any]])?.compactMap { $0["c"] as? Double }
                #expect(closes == [140, 145], "\(bars)")
                #expect(bars["next_page_token"] is NSNull)
                // A page of one bar, and the next page from its token.
                let page = try await json("/v2/stocks/AAPL/bars?timeframe=1Day&limit=1")
                #expect((page["bars"] as? [[String: Any]])?.map { $0["c"] as? Double } == [140])
                let token = try #require(page["next_page_token"] as? String)
                let next = try await json("/v2/stocks/AAPL/bars?timeframe=1Day&limit=1&page_token=\(token)")
                #expect((next["bars"] as? [[String: Any]])?.map { $0["c"] as? Double } == [145])
                let snapshot = try await json("/v2/stocks/AAPL/snapshot")
                #expect(snapshot["symbol"] as? String == "AAPL")
                #expect((snapshot["latestTrade"] as? [String: Any])?["p"] as? Double == 150)

                // A symbol with no data is 404, a malformed one 422, an unknown parameter refused: Alpaca's shape.
                let unknown = try await client.alpaca(.get, "/v2/stocks/ZZZZ/trades/latest", key: key)
                #expect(unknown.status == .notFound)
                #expect(try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: unknown.body)).code == 40_410_000)
                #expect(try await client.alpaca(.get, "/v2/stocks/NOT!VALID/snapshot", key: key).status == .unprocessableContent)
                #expect(try await client.alpaca(.get, "/v2/stocks/AAPL/bars?timeframe=1Day&symbols=ONE", key: key).status == .unprocessableContent)
                // A path that begins a route but is none (`/v2/stocks/trades`): authenticated first, then Alpaca's 404.
                for path in ["/v2/stocks/trades?symbols=AAPL", "/v2/stocks/AAPL/quotes"] {
                    let missing = try await client.alpaca(.get, path, key: key)
                    #expect(missing.status == .notFound)
                    #expect(try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: missing.body)).code == 40_410_000)
                    #expect(try await client.alpaca(.get, path, key: (key.keyID, "wrong")).status == .unauthorized)
                }
            }
        }
    }
}
