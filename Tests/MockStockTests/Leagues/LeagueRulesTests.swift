import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct RulesBody: Decodable, Equatable {
    let commissionFlat: String
    let commissionPercent: String
    let allowShortSelling: Bool
    let shortMarginPercent: String
    let maxPositionPercent: String
    let allowedOrderTypes: [String]
    let allowedSymbols: [String]?
}

struct LeagueWithRulesBody: Decodable {
    let id: Int
    let code: String
    let rules: RulesBody
}

extension TestClientProtocol {
    /// Creates an isolated league with these rules; returns it and the owner's league portfolio id.
    func leagueWithRules(_ rules: String, startingCash: String = "10000", token: String) async throws -> (LeagueWithRulesBody, Int) {
        let response = try await send(.post, "/api/leagues/create",
                                      body: #"{"name":"Ruled","mode":"isolated","startingCash":"\#(startingCash)","rules":\#(rules)}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        let league = try JSONDecoder().decode(LeagueWithRulesBody.self, from: Data(buffer: response.body))
        let portfolios = try await decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
        return (league, try #require(portfolios.first { $0.leagueId == league.id }).id)
    }
}

@Suite("League rules")
struct LeagueRulesTests {
    @Test("a league's rules are shown and apply to its portfolios: commissions, order types, symbols, position limit")
    func rulesApply() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("teacher").token
            let (league, portfolio) = try await client.leagueWithRules(
                #"{"commissionFlat":"1.5","commissionPercent":"0.1","maxPositionPercent":"25","allowedOrderTypes":["market","limit"],"allowedSymbols":["aapl","ONE"]}"#,
                token: token)
            #expect(league.rules == RulesBody(
                commissionFlat: "1.50", commissionPercent: "0.10", allowShortSelling: false, shortMarginPercent: "150.00",
                maxPositionPercent: "25.00", allowedOrderTypes: ["market", "limit"], allowedSymbols: ["AAPL", "ONE"]))
            let shown = try await client.decode(LeagueWithRulesBody.self, "/api/leagues/\(league.id)", token: token)
            #expect(shown.rules == league.rules)

            let other = try await client.trade("buy", #"{"symbol":"TENTH","amount":1,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(try other.status == .unprocessableContent && decodeProblem(other).code == "validation_failed")
            let stop = try await client.placeOrder(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop","stopPrice":"160","portfolioId":\#(portfolio)}"#, token: token)
            #expect(try decodeProblem(stop).detail.contains("stop"))
            // 20 × 150 = 3,000 is more than a quarter of 10,000.
            let big = try await client.trade("buy", #"{"symbol":"AAPL","amount":20,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(try big.status == .unprocessableContent && decodeProblem(big).code == "position_limit")
            let bigOrder = try await client.placeOrder(
                #"{"symbol":"AAPL","side":"buy","quantity":17,"type":"limit","limitPrice":"149","portfolioId":\#(portfolio)}"#, token: token)
            #expect(try decodeProblem(bigOrder).code == "position_limit")

            let bought = try await client.tradeOK("buy", "AAPL", 10, token: token, portfolioID: portfolio)
            // 1.50 flat + 0.1 % of 1,500.
            #expect(bought.trade.fee == "3.00" && bought.cash == "8497.00")
            let resting = try await client.placeOrderOK(
                #"{"symbol":"ONE","side":"buy","quantity":100,"type":"limit","limitPrice":"0.5","portfolioId":\#(portfolio)}"#, token: token)
            #expect(resting.status == "new")
            let money = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            // 50 + 1.50 + 0.05, rounded to the cent.
            #expect(money.reserved == "51.55")

            // The personal portfolio keeps the server's rules.
            let personal = try await client.tradeOK("buy", "TENTH", 10, token: token)
            #expect(personal.trade.fee == "0.00")
        }
    }

    @Test("rules are checked: bad values are 422 and create nothing; a shared league cannot have rules; defaults are today's")
    func badRules() async throws {
        try await TestApp.run(configure: { $0.tradeFee = Decimal(string: "0.5")! }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("strict").token
            for rules in [#"{"commissionPercent":"11"}"#, #"{"commissionFlat":"-1"}"#, #"{"maxPositionPercent":"0"}"#,
                          #"{"maxPositionPercent":"101"}"#, #"{"shortMarginPercent":"99"}"#, #"{"allowedOrderTypes":[]}"#,
                          #"{"allowedOrderTypes":["iceberg"]}"#, #"{"allowedSymbols":["NOPE"]}"#, #"{"allowedSymbols":[]}"#,
                          #"{"commissionPercent":"0.00001"}"#] {
                let response = try await client.send(.post, "/api/leagues/create",
                                                     body: #"{"name":"Bad","mode":"isolated","rules":\#(rules)}"#, token: token)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(rules)")
            }
            let shared = try await client.send(.post, "/api/leagues/create", body: #"{"name":"Shared","rules":{"commissionFlat":"2"}}"#, token: token)
            #expect(shared.status == .unprocessableContent)
            #expect(try await client.decode([LeagueWithRulesBody].self, "/api/leagues", token: token).isEmpty)

            let plain = try await client.leagueWithRules("{}", token: token).0
            #expect(plain.rules == RulesBody(
                commissionFlat: "0.50", commissionPercent: "0.00", allowShortSelling: false, shortMarginPercent: "150.00",
                maxPositionPercent: "100.00", allowedOrderTypes: ["market", "limit", "stop", "stop_limit", "trailing_stop"], allowedSymbols: nil))
        }
    }

    @Test("orders on a league portfolio outside its league's run are 409 and hold nothing")
    func ordersOutsideTheRun() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("early").token
            let response = try await client.send(.post, "/api/leagues/create", body:
                #"{"name":"Later","mode":"isolated","startsAt":"2099-01-01T00:00:00Z","endsAt":"2099-02-01T00:00:00Z"}"#, token: token)
            let league = try JSONDecoder().decode(LeagueWithRulesBody.self, from: Data(buffer: response.body))
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            let portfolio = try #require(portfolios.first { $0.leagueId == league.id }).id
            let order = try await client.placeOrder(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","portfolioId":\#(portfolio)}"#, token: token)
            #expect(try order.status == .conflict && decodeProblem(order).code == "conflict")
            let market = try await client.placeOrder(#"{"symbol":"AAPL","side":"buy","quantity":1,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(market.status == .conflict)
            #expect(try await client.decode(OrderPageBody.self, "/api/orders?status=all&portfolioId=\(portfolio)", token: token).items.isEmpty)
            let money = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(money.reserved == "0.00")
        }
    }

    @Test("short selling where the rules allow it: proceeds credited, margin checked, covering realizes the gain, resting short sales fill")
    func shortSelling() async throws {
        try await TemporaryDatabase.with { database in
            let userID = try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let session = try await client.register("shorter")
                let token = session.token
                let (league, portfolio) = try await client.leagueWithRules(#"{"allowShortSelling":true,"shortMarginPercent":"150"}"#, token: token)
                #expect(league.rules.allowShortSelling && league.rules.shortMarginPercent == "150.00")
                func position() async throws -> PortfolioBody {
                    try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
                }

                // Short 20 at 150: the proceeds are credited, the position is worth −3,000, net worth is unchanged.
                let opened = try await client.tradeOK("sell", "AAPL", 20, token: token, portfolioID: portfolio)
                #expect(opened.cash == "13000.00" && opened.position.quantity == -20)
                var shown = try await position()
                #expect(shown.netWorth == "10000.00" && shown.holdings.first?.quantity == -20)
                #expect(shown.holdings.first?.value == "-3000.00" && shown.holdings.first?.averageCost == "150.00")
                let board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: token)
                #expect(board.items.first?.netWorth == "10000.00")

                // Equity of 10,000 covers 150 % of at most 6,666.67 of shorts: 24 more shares (6,600 in all) fit, 25 do not.
                let tooMuch = try await client.trade("sell", #"{"symbol":"AAPL","amount":25,"portfolioId":\#(portfolio)}"#, token: token)
                #expect(try tooMuch.status == .unprocessableContent && decodeProblem(tooMuch).code == "insufficient_margin")
                _ = try await client.tradeOK("sell", "AAPL", 24, token: token, portfolioID: portfolio)

                // The price falls to 100: the short gains 2,200; buying 44 covers it.
                try await client.setPrice("AAPL", "100")
                #expect(try await position().netWorth == "12200.00")
                let covered = try await client.tradeOK("buy", "AAPL", 44, token: token, portfolioID: portfolio)
                #expect(covered.cash == "12200.00" && covered.position.quantity == 0)
                let achievements = try await client.decode([AchievementBody].self, "/api/achievements", token: token)
                #expect(achievements.first { $0.code == "first_profit" }?.earnedAt != nil)

                // Buying past zero opens a long position at the price.
                _ = try await client.tradeOK("sell", "AAPL", 5, token: token, portfolioID: portfolio)
                let flipped = try await client.tradeOK("buy", "AAPL", 8, token: token, portfolioID: portfolio)
                #expect(flipped.position.quantity == 3)
                shown = try await position()
                #expect(shown.holdings.first?.averageCost == "100.00" && shown.cash == "11900.00")

                // A resting sale of 10 holds back the 3 shares held and goes short for the rest when it fills.
                let order = try await client.placeOrderOK(
                    #"{"symbol":"AAPL","side":"sell","quantity":10,"type":"limit","limitPrice":"120","portfolioId":\#(portfolio)}"#, token: token)
                #expect(order.status == "new")
                try await client.setPrice("AAPL", "121")
                #expect(try await client.order(order.id, token: token).filledAveragePrice == "121.00")
                shown = try await position()
                #expect(shown.holdings.first?.quantity == -7 && shown.holdings.first?.averageCost == "121.00" && shown.cash == "13110.00")

                // The personal portfolio still cannot go short.
                let personal = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
                #expect(try decodeProblem(personal).code == "insufficient_shares")
                return session.user.id
            }
            // The database itself refuses a negative quantity outside a league that allows shorts.
            let pool = PostgresConnectionPool(configuration: database.configuration)
            try await pool.execute(
                """
                INSERT INTO holdings (portfolio_id, symbol, quantity, cost_basis)
                SELECT id, 'ONE', 1, 1 FROM portfolios WHERE user_id = \(userID) AND league_id IS NULL
                """
            )
            await #expect(throws: PostgresError.self) {
                try await pool.execute(
                    "UPDATE holdings SET quantity = -1, cost_basis = -1 WHERE symbol = 'ONE' AND portfolio_id = (SELECT id FROM portfolios WHERE user_id = \(userID) AND league_id IS NULL)"
                )
            }
            await pool.close()
        }
    }
}
