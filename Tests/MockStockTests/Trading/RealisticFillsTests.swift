import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

/// A trade with what made it and where its price came from.
struct PricedTradeBody: Decodable, Equatable {
    struct Pricing: Decodable, Equatable {
        let quote: String
        let spread: String
        let impact: String
    }

    let id: Int
    let side: String
    let quantity: Int
    let price: String
    let amount: String
    let source: String
    let pricing: Pricing
}

struct PricedTradeResultBody: Decodable {
    let trade: PricedTradeBody
    let cash: String
}

extension TestClientProtocol {
    func pricedTrade(_ side: String, _ symbol: String, _ amount: Int, portfolio: Int, token: String) async throws -> PricedTradeResultBody {
        let response = try await trade(side, #"{"symbol":"\#(symbol)","amount":\#(amount),"portfolioId":\#(portfolio)}"#, token: token)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(PricedTradeResultBody.self, from: Data(buffer: response.body))
    }

    /// Stores a daily bar of `volume` shares for `symbol` on the day before today (UTC, the
    /// tests' market day), without moving its current price.
    func storeYesterdaysVolume(_ symbol: String, _ volume: Int, close: String) async throws {
        let yesterday = ISO8601DateFormatter.string(from: Date().addingTimeInterval(-86_400), timeZone: .gmt, formatOptions: [.withFullDate])
        let csv = "symbol,date,open,high,low,close,volume,dividend,split\n\(symbol),\(yesterday),\(close),\(close),\(close),\(close),\(volume),0,1\n"
        let response = try await send(.post, "/api/admin/prices", body: csv, contentType: "text/csv", token: try await adminToken())
        #expect(response.status == .ok, "\(String(buffer: response.body))")
    }
}

@Suite("Realistic fills")
struct RealisticFillsTests {
    private static let plain = PricedTradeBody.Pricing(quote: "150.00", spread: "0.00", impact: "0.00")

    @Test("the pricing rule by hand: a spread rounds a buy up and a sale down to the cent; impact is coefficient × (q/V)² × last")
    func pricingRule() {
        var rules = TradingRules(commission: Commission())
        rules.fillPrice = .quote
        rules.spreadBps = 10
        // 33.33 × (1 + 10/20000) = 33.346665 → 33.35; × (1 − 10/20000) = 33.313335 → 33.31.
        let buy = rules.pricing(.buy, last: Decimal(string: "33.33")!, quantity: 3, volume: nil)
        #expect(buy.price == Decimal(string: "33.35")! && buy.spread == Decimal(string: "0.02")! && buy.impact == 0)
        let sale = rules.pricing(.sell, last: Decimal(string: "33.33")!, quantity: 3, volume: nil)
        #expect(sale.price == Decimal(string: "33.31")! && sale.spread == Decimal(string: "0.02")!)
        // A tenth of a 1,000-share day at a coefficient of 0.1: 0.1 × 0.1² × 150 = 0.15 a share.
        rules.impactCoefficient = Decimal(string: "0.1")!
        rules.fillPrice = .last
        let big = rules.pricing(.buy, last: 150, quantity: 100, volume: 1_000)
        #expect(big.quote == 150 && big.spread == 0 && big.impact == Decimal(string: "0.15")! && big.price == Decimal(string: "150.15")!)
        #expect(rules.pricing(.sell, last: 150, quantity: 100, volume: 1_000).price == Decimal(string: "149.85")!)
        // 1 % of the volume moves the price 0.0015: nothing at the cent. No known volume, no impact.
        #expect(rules.pricing(.buy, last: 150, quantity: 10, volume: 1_000).impact == 0)
        #expect(rules.pricing(.buy, last: 150, quantity: 100_000, volume: nil).impact == 0)
        // A sale's price stays at least a cent, however large the impact.
        rules.impactCoefficient = 1
        #expect(rules.pricing(.sell, last: 2, quantity: 10_000, volume: 1_000).price == Decimal(string: "0.01")!)
        // A recorded fill gives its quote back.
        #expect(FillPricing(side: .sell, price: Decimal(string: "149.85")!, spread: 0, impact: Decimal(string: "0.15")!).quote == 150)
    }

    @Test("a league quoting a spread fills a buy at the ask and a sale at the bid, and every record of the trade says so")
    func spreadFills() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            try await client.setPrice("AAPL", "33.33")
            let token = try await client.register("spread").token
            let (league, portfolio) = try await client.leagueWithRules(#"{"fillPrice":"quote","spreadBps":"10"}"#, token: token)
            let shown = try await client.execute(uri: "/api/leagues/\(league.id)", method: .get, headers: [.authorization: "Bearer \(token)"])
            let rules = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])["rules"] as? [String: Any]
            #expect(rules?["fillPrice"] as? String == "quote" && rules?["spreadBps"] as? String == "10.00")

            let bought = try await client.pricedTrade("buy", "AAPL", 3, portfolio: portfolio, token: token)
            #expect(bought.trade.price == "33.35" && bought.trade.amount == "100.05" && bought.trade.source == "trade")
            #expect(bought.trade.pricing == .init(quote: "33.33", spread: "0.02", impact: "0.00"))
            let sold = try await client.pricedTrade("sell", "AAPL", 3, portfolio: portfolio, token: token)
            #expect(sold.trade.price == "33.31" && sold.trade.pricing == .init(quote: "33.33", spread: "0.02", impact: "0.00"))
            // The round trip cost the spread: 10,000 − 100.05 + 99.93.
            #expect(sold.cash == "9999.88")

            struct Page: Decodable { let items: [PricedTradeBody] }
            let history = try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token)
            #expect(history.items.map(\.pricing) == [sold.trade.pricing, bought.trade.pricing])
            struct Activities: Decodable {
                struct Item: Decodable { let type: String; let source: String?; let pricing: PricedTradeBody.Pricing? }
                let items: [Item]
            }
            let activities = try await client.decode(Activities.self, "/api/activities?portfolioId=\(portfolio)", token: token)
            let fills = activities.items.filter { $0.type == "fill" }
            #expect(fills.map(\.source) == ["trade", "trade"] && fills.first?.pricing == sold.trade.pricing)
            #expect(activities.items.filter { $0.type != "fill" }.allSatisfy { $0.source == nil && $0.pricing == nil })

            // Under /v2 the activity carries the same fields.
            let key = try await client.apiKey(token: token, portfolioID: portfolio)
            let v2 = try await client.alpaca(.get, "/v2/account/activities/FILL", key: key)
            let v2Fills = try #require(try JSONSerialization.jsonObject(with: Data(buffer: v2.body)) as? [[String: Any]])
            #expect(v2Fills.count == 2)
            #expect(v2Fills.allSatisfy { $0["source"] as? String == "trade" })
            #expect(v2Fills.compactMap { ($0["pricing"] as? [String: Any])?["spread"] as? String } == ["0.02", "0.02"])

            // The personal portfolio fills at the last price: the quote is the price.
            let personal = try await client.send(.post, "/api/stock/buy", body: #"{"symbol":"AAPL","amount":1}"#, token: token)
            let plain = try JSONDecoder().decode(PricedTradeResultBody.self, from: Data(buffer: personal.body)).trade
            #expect(plain.price == "33.33" && plain.pricing == .init(quote: "33.33", spread: "0.00", impact: "0.00"))
        }
    }

    @Test("impact grows with the order's share of yesterday's volume; a symbol without a known volume has none")
    func impactFills() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            try await client.storeYesterdaysVolume("AAPL", 1_000, close: "148")
            try await client.setPrice("AAPL", "150.00")
            let token = try await client.register("impact").token
            let (_, portfolio) = try await client.leagueWithRules(#"{"impactCoefficient":"0.1"}"#, startingCash: "100000", token: token)
            // A tenth of the volume: 0.1 × 0.1² × 150 = 0.15 a share.
            let big = try await client.pricedTrade("buy", "AAPL", 100, portfolio: portfolio, token: token)
            #expect(big.trade.price == "150.15" && big.trade.pricing == .init(quote: "150.00", spread: "0.00", impact: "0.15"))
            #expect(big.trade.amount == "15015.00")
            // 1 %: 0.0015 a share, nothing at the cent.
            let small = try await client.pricedTrade("sell", "AAPL", 10, portfolio: portfolio, token: token)
            #expect(small.trade.price == "150.00" && small.trade.pricing == Self.plain)
            // The other 90: 0.1 × 0.09² × 150 = 0.1215 → 0.12 below the quote.
            let rest = try await client.pricedTrade("sell", "AAPL", 90, portfolio: portfolio, token: token)
            #expect(rest.trade.price == "149.88" && rest.trade.pricing.impact == "0.12")
            // TENTH has no daily bar: no volume is known, no impact whatever the size.
            let tenth = try await client.pricedTrade("buy", "TENTH", 50_000, portfolio: portfolio, token: token)
            #expect(tenth.trade.price == "0.10" && tenth.trade.pricing.impact == "0.00")
        }
    }

    @Test("minimum prices: buying below minPrice and selling short below minShortPrice are 422 price_too_low; selling what is held is not")
    func minimumPrices() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("penny").token
            let (_, portfolio) = try await client.leagueWithRules(
                #"{"minPrice":"1","allowShortSelling":true,"minShortPrice":"5"}"#, token: token)
            let penny = try await client.trade("buy", #"{"symbol":"TENTH","amount":10,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(try penny.status == .unprocessableContent && decodeProblem(penny).code == "price_too_low")
            let order = try await client.placeOrder(
                #"{"symbol":"TENTH","side":"buy","quantity":10,"type":"limit","limitPrice":"2","portfolioId":\#(portfolio)}"#, token: token)
            #expect(try decodeProblem(order).code == "price_too_low")
            // 1.00 is not below 1.
            _ = try await client.pricedTrade("buy", "ONE", 10, portfolio: portfolio, token: token)
            // Selling the 10 held is allowed at 1.00; going short of a 1.00 stock is not.
            let short = try await client.trade("sell", #"{"symbol":"ONE","amount":15,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(try short.status == .unprocessableContent && decodeProblem(short).code == "price_too_low")
            _ = try await client.pricedTrade("sell", "ONE", 10, portfolio: portfolio, token: token)
            // AAPL at 150 may be shorted.
            let aapl = try await client.pricedTrade("sell", "AAPL", 2, portfolio: portfolio, token: token)
            #expect(aapl.trade.price == "150.00")
            let money = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(money.holdings.map(\.symbol) == ["AAPL"] && money.cash == "10300.00")
        }
    }

    @Test("a limit order fills only once the league's ask reaches its limit, at that ask, and reserves no more than its limit")
    func limitAgainstTheQuote() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("limit").token
            let (_, portfolio) = try await client.leagueWithRules(#"{"fillPrice":"quote","spreadBps":"100"}"#, token: token)
            let placed = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"149","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                token: token)
            let held = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(held.reserved == "1490.00")
            // The last price reaches the limit, the ask does not: 149 × 1.005 = 149.745 → 149.75.
            try await client.setPrice("AAPL", "149")
            #expect(try await client.order(placed.id, token: token).status == "new")
            // 148.20 × 1.005 = 148.941 → 148.95, within the limit.
            try await client.setPrice("AAPL", "148.20")
            let filled = try await client.order(placed.id, token: token)
            #expect(filled.status == "filled" && filled.filledAveragePrice == "148.95")
            struct Page: Decodable { let items: [PricedTradeBody] }
            let trade = try #require(try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token).items.first)
            #expect(trade.source == "order" && trade.pricing == .init(quote: "148.20", spread: "0.75", impact: "0.00"))
            // A market order placed through /api/orders is an order too.
            let market = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"sell","quantity":5,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(market.status == "filled" && market.filledAveragePrice == "147.45")
            let sale = try #require(try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token).items.first)
            #expect(sale.source == "order" && sale.pricing == .init(quote: "148.20", spread: "0.75", impact: "0.00"))
        }
    }

    @Test("bad realism rules are 422 validation_failed and create nothing; the defaults are the plain fills of before")
    func badRealismRules() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("realism").token
            for rules in [#"{"fillPrice":"mid"}"#, #"{"spreadBps":"501"}"#, #"{"spreadBps":"-1"}"#, #"{"impactCoefficient":"1.5"}"#,
                          #"{"minPrice":"-0.01"}"#, #"{"minShortPrice":"1000001"}"#, #"{"spreadBps":"0.00001"}"#, #"{"fillPrice":7}"#] {
                let response = try await client.send(.post, "/api/leagues/create",
                                                     body: #"{"name":"Bad","mode":"isolated","rules":\#(rules)}"#, token: token)
                #expect(response.status == .unprocessableContent, "\(rules)")
            }
            let (league, portfolio) = try await client.leagueWithRules("{}", token: token)
            let shown = try await client.execute(uri: "/api/leagues/\(league.id)", method: .get, headers: [.authorization: "Bearer \(token)"])
            let rules = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])["rules"] as? [String: Any]
            #expect(rules?["fillPrice"] as? String == "last" && rules?["impactCoefficient"] as? String == "0")
            #expect(rules?["minPrice"] as? String == "0.00" && rules?["minShortPrice"] as? String == "0.00")
            let plain = try await client.pricedTrade("buy", "AAPL", 1, portfolio: portfolio, token: token)
            #expect(plain.trade.price == "150.00" && plain.trade.pricing == Self.plain)
        }
    }
}
