import Foundation
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

@Suite("Leagues in other currencies")
struct LeagueCurrencyTests {
    struct Portfolio: Decodable {
        struct Holding: Decodable { let symbol: String; let quantity: Int; let price: String; let value: String }
        let id: Int
        let currency: String
        let cash: String
        let netWorth: String
        let holdings: [Holding]
    }

    struct Trade: Decodable { let price: String; let amount: String; let fxRate: String? }

    @Test("a euro league's portfolios hold euros, buy dollar stocks at the rate plus its spread, sell at it minus, and are valued at the rate")
    func euroLeague() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            // The ECB's latest rate: 1.1122 dollars a euro, so 111.22 dollars are 100 euros.
            #expect(try await CurrencyTests.load(client).status == .ok)
            try await client.setPrice("AAPL", "111.22")
            let host = try await client.register("eurohost").token
            let league = try await client.createLeague(
                #"{"name":"Euro club","mode":"isolated","startingCash":"10000","currency":"EUR","rules":{"fxSpreadPercent":"1"}}"#,
                token: host
            )
            struct Currency: Decodable { struct Rules: Decodable { let fxSpreadPercent: String }; let currency: String; let rules: Rules }
            let shown = try await client.decode(Currency.self, "/api/leagues/\(league.id)", token: host)
            #expect(shown.currency == "EUR" && shown.rules.fxSpreadPercent == "1.00")
            let id = try #require(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: host)
                .first { $0.leagueId == league.id }?.id)
            func portfolio() async throws -> Portfolio {
                try await client.decode(Portfolio.self, "/api/portfolio?portfolioId=\(id)", token: host)
            }
            let start = try await portfolio()
            #expect(start.currency == "EUR" && start.cash == "10000.00")

            // A buy pays 1% over the rate: 111.22 × (1/1.1122 × 1.01 = 0.908110) = 101 euros a share.
            let bought = try await client.trade("buy", #"{"symbol":"AAPL","amount":10,"portfolioId":\#(id)}"#, token: host)
            #expect(bought.status == .ok, "\(String(buffer: bought.body))")
            // A sale gets 1% under it: 111.22 × 0.890128 = 99 euros a share.
            let sold = try await client.trade("sell", #"{"symbol":"AAPL","amount":4,"portfolioId":\#(id)}"#, token: host)
            #expect(sold.status == .ok, "\(String(buffer: sold.body))")
            struct Page: Decodable { let items: [Trade] }
            let trades = try await client.decode(Page.self, "/api/transactions?portfolioId=\(id)", token: host).items
            #expect(trades.map(\.price) == ["99.00", "101.00"] && trades.map(\.fxRate) == ["0.890128", "0.908110"])

            // 10000 − 1010 + 396 in cash; 6 shares at the mid rate, 100 euros each.
            let now = try await portfolio()
            #expect(now.cash == "9386.00" && now.netWorth == "9986.00", "\(now)")
            #expect(now.holdings.map(\.price) == ["100.00"] && now.holdings.map(\.value) == ["600.00"])
            // The standings, the history and the P&L count in euros alike.
            let standings = try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: host)
            #expect(standings.members?.map(\.netWorth) == ["9986.00"])
            struct History: Decodable { struct Point: Decodable { let netWorth: String }; let currency: String; let points: [Point] }
            let history = try await client.decode(History.self, "/api/portfolios/\(id)/history", token: host)
            #expect(history.currency == "EUR" && history.points.last?.netWorth == "9986.00")
            struct Profit: Decodable { let currency: String; let realized: String; let unrealized: String }
            let profit = try await client.decode(Profit.self, "/api/portfolios/\(id)/pnl", token: host)
            // The spread is the loss: 4 × (99 − 101) realized, 6 × (100 − 101) not yet.
            #expect(profit.currency == "EUR" && profit.realized == "-8.00" && profit.unrealized == "-6.00")
            #expect(try await client.get("/api/portfolios/\(id)/pnl?currency=USD", token: host).status == .unprocessableContent)

            // A member who joins gets euros too; personal portfolios stay in dollars.
            let member = try await client.register("euromember").token
            #expect(try await client.join(league.code, token: member).status == .ok)
            let theirs = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: member)
            struct Summary: Decodable { let leagueId: Int?; let currency: String; let cash: String }
            let summaries = try await client.decode([Summary].self, "/api/portfolios", token: member)
            #expect(theirs.count == 2 && summaries.map(\.currency) == ["USD", "EUR"] && summaries.last?.cash == "10000.00")
        }
    }

    @Test("a league's currency needs an isolated league and a rate; its spread needs another currency")
    func refusals() async throws {
        try await TestApp.run { client in
            #expect(try await CurrencyTests.load(client).status == .ok)
            let token = try await client.register("refused").token
            for body in [#"{"name":"a","currency":"EUR"}"#, #"{"name":"b","mode":"isolated","currency":"CYP"}"#,
                         #"{"name":"c","mode":"isolated","currency":"EURO"}"#,
                         #"{"name":"d","mode":"isolated","rules":{"fxSpreadPercent":"1"}}"#,
                         #"{"name":"e","mode":"isolated","currency":"GBP","rules":{"fxSpreadPercent":"11"}}"#] {
                let response = try await client.send(.post, "/api/leagues/create", body: body, token: token)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(body)")
            }
            #expect(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).count == 1)
        }
    }
}
