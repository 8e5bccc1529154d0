import Foundation
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Testing
import TestSupport

@Suite("Volume cap")
struct VolumeCapTests {
    private static func day(_ date: Date, plus days: Int) -> String {
        ISO8601DateFormatter.string(from: date.addingTimeInterval(Double(days) * 86_400), timeZone: .gmt, formatOptions: [.withFullDate])
    }

    @Test("the cap by hand: ⌊cap % × V⌋ shares a day, at least one; none without a cap or a known volume")
    func capRule() {
        var rules = TradingRules(commission: Commission())
        #expect(rules.volumeCap(volume: 1_000) == nil)
        rules.volumeCapPercent = 1
        #expect(rules.volumeCap(volume: 1_000) == 10)
        #expect(rules.volumeCap(volume: 1_999) == 19)
        #expect(rules.volumeCap(volume: 50) == 1)
        #expect(rules.volumeCap(volume: nil) == nil)
        rules.volumeCapPercent = Decimal(string: "2.5")!
        #expect(rules.volumeCap(volume: 1_000) == 25)
    }

    @Test("a cap of 1 % of 1,000 shares: a trade beyond the 10 a day is 422 volume_cap with what is available; an order fills 10 a day, partially_filled, its day order's rest expiring at the close")
    func capAcrossDays() async throws {
        let start = Date()
        let clock = MovableDate("\(Self.day(start, plus: 0))T10:00:00Z")
        try await TestApp.run(configure: {
            $0.clock = clock.reader
            $0.orderSweepInterval = .milliseconds(50)
        }) { client in
            try await client.seedTradingMarket()
            try await client.storeYesterdaysVolume("AAPL", 1_000, close: "148")
            try await client.setPrice("AAPL", "150.00")
            let token = try await client.register("capped").token
            let (_, portfolio) = try await client.leagueWithRules(#"{"volumeCapPercent":"1"}"#, token: token)
            func buy(_ amount: Int) async throws -> TestResponse {
                try await client.trade("buy", #"{"symbol":"AAPL","amount":\#(amount),"portfolioId":\#(portfolio)}"#, token: token)
            }
            func money() async throws -> ReservedPortfolioBody {
                try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            }

            // 1 % of 1,000 = 10 shares today.
            let tooMany = try await buy(11)
            let refused = try decodeProblem(tooMany)
            #expect(tooMany.status == .unprocessableContent && refused.code == "volume_cap" && refused.available == 10)
            #expect(try await money().cash == "10000.00")
            _ = try await client.pricedTrade("buy", "AAPL", 4, portfolio: portfolio, token: token)
            #expect(try decodeProblem(try await buy(7)).available == 6)

            // An order of 20 fills the 6 left today and waits with the rest, holding back what it may still cost.
            let placed = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":20,"type":"limit","limitPrice":"151","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                token: token)
            // (Filled as it was placed, or by the sweep that was running then.)
            let part = try await client.eventually({ try await client.order(placed.id, token: token) }) { $0.filledQuantity == 6 }
            #expect(part.status == "partially_filled" && part.filledAveragePrice == "150.00")
            // 20 × 151 held back, less the 900 the part cost.
            var now = try await money()
            #expect(now.cash == "8500.00" && now.reserved == "2120.00")
            #expect(try decodeProblem(try await buy(1)).available == 0)
            // Fill or kill beyond what is left: refused whole. Immediate or cancel: nothing fills, it is cancelled.
            let fok = try await client.placeOrder(#"{"symbol":"AAPL","side":"buy","quantity":1,"timeInForce":"fok","portfolioId":\#(portfolio)}"#, token: token)
            #expect(try fok.status == .unprocessableContent && decodeProblem(fok).code == "volume_cap")
            let ioc = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"timeInForce":"ioc","portfolioId":\#(portfolio)}"#, token: token)
            #expect(ioc.status == "canceled" && ioc.filledQuantity == 0)

            // The next market day: 10 more.
            clock.set("\(Self.day(start, plus: 1))T10:00:00Z")
            let second = try await client.eventually({ try await client.order(placed.id, token: token) }) { $0.filledQuantity == 16 }
            #expect(second.status == "partially_filled" && second.filledAveragePrice == "150.00")

            // The day after, the last 4, at 140: (16 × 150 + 4 × 140) / 20 = 148.
            try await client.setPrice("AAPL", "140.00")
            clock.set("\(Self.day(start, plus: 2))T10:00:00Z")
            let filled = try await client.eventually({ try await client.order(placed.id, token: token) }) { $0.status == "filled" }
            #expect(filled.status == "filled" && filled.filledQuantity == 20 && filled.filledAveragePrice == "148.00")
            now = try await money()
            #expect(now.cash == "6440.00" && now.reserved == "0.00")

            // A day order of 15 that day: the 6 the cap leaves fill, the rest expires at the close.
            let day = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":15,"type":"limit","limitPrice":"141","portfolioId":\#(portfolio)}"#, token: token)
            let dayPart = try await client.eventually({ try await client.order(day.id, token: token) }) { $0.filledQuantity == 6 }
            #expect(dayPart.status == "partially_filled", "\(dayPart)")
            // (Above its limit from then on, so that it could not fill the next day either.)
            try await client.setPrice("AAPL", "150.00")
            clock.set("\(Self.day(start, plus: 3))T00:00:01Z")
            let expired = try await client.eventually({ try await client.order(day.id, token: token) }) { $0.status == "expired" }
            #expect(expired.status == "expired" && expired.filledQuantity == 6 && expired.filledAveragePrice == "140.00")
            now = try await money()
            #expect(now.cash == "5600.00" && now.reserved == "0.00")

            // The history has every part as a trade of its own, each made by an order.
            struct Page: Decodable { let items: [PricedTradeBody] }
            let trades = try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token).items
            #expect(trades.map(\.quantity) == [6, 4, 10, 6, 4])
            #expect(trades.map(\.source) == ["order", "order", "order", "order", "trade"])
            // The orders: the one trade of 4 (a market order of its own), the ioc, the order of 20, the day order; no part is one.
            let closed = try await client.decode(OrderPageBody.self, "/api/orders?status=closed&portfolioId=\(portfolio)", token: token).items
            #expect(closed.map(\.quantity).sorted() == [1, 4, 15, 20])
            let held = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(held.holdings.first?.quantity == 30)
        }
    }

    @Test("bad caps are 422 and create nothing; a league without one shows null")
    func badCaps() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("capper").token
            for cap in [#""0.05""#, #""101""#, #""-1""#, #""abc""#, #""1.00001""#] {
                let response = try await client.send(.post, "/api/leagues/create",
                                                     body: #"{"name":"Bad","mode":"isolated","rules":{"volumeCapPercent":\#(cap)}}"#, token: token)
                #expect(response.status == .unprocessableContent, "\(cap)")
            }
            let (league, _) = try await client.leagueWithRules("{}", token: token)
            let shown = try await client.execute(uri: "/api/leagues/\(league.id)", method: .get, headers: [.authorization: "Bearer \(token)"])
            let rules = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])["rules"] as? [String: Any]
            #expect(rules?["volumeCapPercent"] is NSNull)
        }
    }
}
