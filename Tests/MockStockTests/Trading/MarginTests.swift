import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

/// A notification with its kind.
struct KindedNotificationBody: Decodable {
    let title: String
    let body: String
    let kind: String?
}

struct CashMovementBody: Decodable {
    let kind: String
    let amount: String
    let note: String
}

private struct CashMovementPage: Decodable { let items: [CashMovementBody] }
private struct KindedNotificationPage: Decodable { let items: [KindedNotificationBody] }

extension TestClientProtocol {
    /// Waits (up to five seconds) until `condition` holds of what `read` returns; returns the last reading.
    func eventually<T: Sendable>(_ read: () async throws -> T, until condition: (T) -> Bool) async throws -> T {
        var value = try await read()
        for _ in 0..<100 where !condition(value) {
            try await Task.sleep(for: .milliseconds(50))
            value = try await read()
        }
        return value
    }

    func cashMovements(portfolio: Int, token: String) async throws -> [CashMovementBody] {
        try await decode(CashMovementPage.self, "/api/cash-movements?portfolioId=\(portfolio)&limit=200", token: token).items
    }

    func kindedNotifications(token: String) async throws -> [KindedNotificationBody] {
        try await decode(KindedNotificationPage.self, "/api/notifications?limit=100", token: token).items
    }
}

@Suite("Margin, interest and borrow fees")
struct MarginTests {
    private static func day(_ date: Date, plus days: Int = 0) -> String {
        ISO8601DateFormatter.string(from: date.addingTimeInterval(Double(days) * 86_400), timeZone: .gmt, formatOptions: [.withFullDate])
    }

    @Test("a buy may borrow while long value × marginPercent % stays within equity; beyond it 422 insufficient_margin; a cash league never borrows")
    func buyingOnMargin() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("margin").token
            let (league, portfolio) = try await client.leagueWithRules(#"{"marginPercent":"50","maintenancePercent":"30"}"#, token: token)
            #expect(league.id > 0)
            // 100 × 150 = 15,000 with 10,000 of cash: 5,000 borrowed; 50 % of 15,000 = 7,500 ≤ equity 10,000.
            let first = try await client.pricedTrade("buy", "AAPL", 100, portfolio: portfolio, token: token)
            #expect(first.cash == "-5000.00")
            // A bot reads what is left as Alpaca's margin account shows it: (10,000 − 7,500) × 100 / 50.
            let key = try await client.apiKey(token: token, portfolioID: portfolio)
            let account = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.alpaca(.get, "/v2/account", key: key).body))
                as? [String: Any])
            #expect(account["buying_power"] as? String == "5000.00" && account["multiplier"] as? String == "2")
            #expect(account["cash"] as? String == "-5000.00" && account["equity"] as? String == "10000.00")
            #expect(account["initial_margin"] as? String == "7500.00" && account["maintenance_margin"] as? String == "4500.00")
            // 40 more (6,000, beyond that 5,000): 50 % of 21,000 = 10,500 > equity 10,000.
            let more = try await client.trade("buy", #"{"symbol":"AAPL","amount":40,"portfolioId":\#(portfolio)}"#, token: token)
            #expect(try more.status == .unprocessableContent && decodeProblem(more).code == "insufficient_margin")
            // 30 more (4,500): 50 % of 19,500 = 9,750 ≤ 10,000.
            let third = try await client.pricedTrade("buy", "AAPL", 30, portfolio: portfolio, token: token)
            #expect(third.cash == "-9500.00")
            let money = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(money.cash == "-9500.00" && money.netWorth == "10000.00")

            // The same buy in a cash league is beyond its cash.
            let (_, cashOnly) = try await client.leagueWithRules("{}", token: token)
            let refused = try await client.trade("buy", #"{"symbol":"AAPL","amount":100,"portfolioId":\#(cashOnly)}"#, token: token)
            #expect(try refused.status == .unprocessableContent && decodeProblem(refused).code == "insufficient_funds")
        }
    }

    @Test("each close charges interest on the loan; equity below maintenance is a margin call, and still below at the next close the position is sold")
    func marginCallAndSale() async throws {
        let start = Date()
        let clock = MovableDate(ISO8601DateFormatter().string(from: start))
        try await TestApp.run(configure: {
            $0.clock = clock.reader
            $0.orderSweepInterval = .milliseconds(50)
        }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("called").token
            let (_, portfolio) = try await client.leagueWithRules(
                #"{"marginPercent":"50","maintenancePercent":"30","debitRatePercent":"8"}"#, token: token)
            let bought = try await client.pricedTrade("buy", "AAPL", 100, portfolio: portfolio, token: token)
            #expect(bought.cash == "-5000.00")
            // The first close after the league began: today's at 16:00 UTC, or tomorrow's.
            let today16 = ISO8601DateFormatter().date(from: "\(Self.day(start))T16:00:00Z")!
            let first = start < today16 ? 0 : 1
            func afterClose(_ index: Int) { clock.set("\(Self.day(start, plus: first + index + 1))T10:00:00Z") }

            // Close 1: one day on 5,000 borrowed at 8 %: 5,000 × 8 / 36,000 = 1.111 → 1.11.
            afterClose(0)
            let charged = try await client.eventually({ try await client.cashMovements(portfolio: portfolio, token: token) }) {
                $0.contains { $0.kind == "interest" }
            }
            #expect(charged.filter { $0.kind == "interest" }.map(\.amount) == ["-1.11"])
            #expect(charged.first { $0.kind == "interest" }?.note == "Interest on $5,000.00 borrowed, 1 day")

            // AAPL falls to 70: equity −5,001.11 + 7,000 = 1,998.89, below 30 % of 7,000 = 2,100.
            try await client.setPrice("AAPL", "70")
            afterClose(1)
            let called = try await client.eventually({ try await client.kindedNotifications(token: token) }) {
                $0.contains { $0.kind == "margin_call" }
            }
            let call = try #require(called.first { $0.kind == "margin_call" })
            // Close 2 charged 5,001.11 × 8 / 36,000 = 1.1114 → 1.11 first: equity 1,997.78.
            #expect(call.body.contains("$1,997.78") && call.body.contains("30% maintenance of $2,100.00"), "\(call.body)")
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token).holdings.count == 1)

            // Close 3: still below (1,996.67 after 1.11 more): the 100 shares are sold at 70.
            afterClose(2)
            let sold = try await client.eventually({
                try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            }) { $0.holdings.isEmpty }
            #expect(sold.holdings.isEmpty && sold.cash == "1996.67")
            struct Page: Decodable { let items: [PricedTradeBody] }
            let sale = try #require(try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token).items.first)
            #expect(sale.side == "sell" && sale.quantity == 100 && sale.price == "70.00" && sale.source == "liquidation")
            // The notice follows the sales.
            let notices = try await client.eventually({ try await client.kindedNotifications(token: token) }) {
                $0.contains { $0.kind == "liquidated" }
            }
            let liquidated = try #require(notices.first { $0.kind == "liquidated" })
            #expect(liquidated.body.contains("sold 100 AAPL at 70.00"), "\(liquidated.body)")
            #expect(notices.filter { $0.kind == "margin_call" }.count == 1, "one notice a call")
            // Cash rebuilds from history alone: starting cash, the buy, three interest charges, the sale.
            let movements = try await client.cashMovements(portfolio: portfolio, token: token)
            #expect(movements.filter { $0.kind == "interest" }.map(\.amount) == ["-1.11", "-1.11", "-1.11"])
            // Interest is a return, not money paid in: P&L counts it.
            let pnl = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.execute(
                uri: "/api/portfolios/\(portfolio)/pnl", method: .get, headers: [.authorization: "Bearer \(token)"]).body)) as? [String: Any])
            #expect(pnl["interest"] as? String == "-3.33" && pnl["realized"] as? String == "-8000.00")

            // Another run of the same close changes nothing.
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await client.cashMovements(portfolio: portfolio, token: token).count == movements.count)
        }
    }

    @Test("a weekend's borrow fee: Monday's close charges a short three days, and idle cash earns the credit rate")
    func weekendBorrowFee() async throws {
        // Now, while no close of the league has passed; then the closes of the first Friday
        // at least two days away whose Monday after trades too (New York).
        let now = Date()
        let hours = MarketHours(schedule: .nyse)
        let friday = try #require((2..<60).lazy.map { Self.day(now, plus: $0) }.first { day in
            let date = ISO8601DateFormatter().date(from: "\(day)T12:00:00Z")!
            return Calendar(identifier: .gregorian).component(.weekday, from: date) == 6
                && hours.tradingDays(count: 2, before: Self.day(date, plus: 4)) == [day, Self.day(date, plus: 3)]
        })
        let fridayNoon = ISO8601DateFormatter().date(from: "\(friday)T12:00:00Z")!
        let clock = MovableDate(ISO8601DateFormatter().string(from: now))
        try await TestApp.run(configure: {
            $0.clock = clock.reader
            $0.marketHours = .nyse
            $0.orderSweepInterval = .milliseconds(50)
        }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("shorty").token
            let (_, portfolio) = try await client.leagueWithRules(
                #"{"allowShortSelling":true,"borrowFeePercent":"36","creditRatePercent":"3.6"}"#, token: token)
            let short = try await client.pricedTrade("sell", "AAPL", 10, portfolio: portfolio, token: token)
            #expect(short.cash == "11500.00")
            // Saturday morning: Friday's close, the league's first, one day. 10 × 150 × 36 / 36,000 = 1.50; 11,500 × 3.6 / 36,000 = 1.15.
            clock.set("\(Self.day(fridayNoon, plus: 1))T15:00:00Z")
            let friday = try await client.eventually({ try await client.cashMovements(portfolio: portfolio, token: token) }) {
                $0.contains { $0.kind == "borrow_fee" }
            }
            #expect(friday.filter { $0.kind == "borrow_fee" }.map(\.amount) == ["-1.50"])
            #expect(friday.filter { $0.kind == "interest" }.map(\.amount) == ["1.15"])
            #expect(friday.first { $0.kind == "borrow_fee" }?.note == "Borrow fee on $1,500.00 sold short, 1 day")
            // Sunday: no close since Friday's.
            clock.set("\(Self.day(fridayNoon, plus: 2))T15:00:00Z")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await client.cashMovements(portfolio: portfolio, token: token).count == friday.count)
            // Tuesday morning: Monday's close charges Saturday, Sunday and Monday: 4.50, and
            // 11,499.65 × 3.6 / 36,000 × 3 = 3.449895 → 3.45.
            clock.set("\(Self.day(fridayNoon, plus: 4))T15:00:00Z")
            let monday = try await client.eventually({ try await client.cashMovements(portfolio: portfolio, token: token) }) {
                $0.filter { $0.kind == "borrow_fee" }.count == 2
            }
            #expect(monday.filter { $0.kind == "borrow_fee" }.map(\.amount) == ["-4.50", "-1.50"])
            #expect(monday.filter { $0.kind == "interest" }.map(\.amount) == ["3.45", "1.15"])
            let money = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
            #expect(money.cash == "11498.60")
        }
    }

    @Test("bad margin rules are 422 and create nothing; the defaults lend nothing and charge nothing")
    func badMarginRules() async throws {
        try await TestApp.run { client in
            let token = try await client.register("margins").token
            for rules in [#"{"marginPercent":"24"}"#, #"{"marginPercent":"101"}"#, #"{"maintenancePercent":"9"}"#,
                          #"{"debitRatePercent":"51"}"#, #"{"creditRatePercent":"21"}"#, #"{"borrowFeePercent":"-1"}"#,
                          #"{"borrowFeePercent":"101"}"#, #"{"marginPercent":"50.00001"}"#] {
                let response = try await client.send(.post, "/api/leagues/create",
                                                     body: #"{"name":"Bad","mode":"isolated","rules":\#(rules)}"#, token: token)
                #expect(response.status == .unprocessableContent, "\(rules)")
            }
            let (league, _) = try await client.leagueWithRules("{}", token: token)
            let shown = try await client.execute(uri: "/api/leagues/\(league.id)", method: .get, headers: [.authorization: "Bearer \(token)"])
            let rules = try #require(try JSONSerialization.jsonObject(with: Data(buffer: shown.body)) as? [String: Any])["rules"] as? [String: Any]
            #expect(rules?["marginPercent"] is NSNull && rules?["maintenancePercent"] is NSNull)
            #expect(rules?["debitRatePercent"] as? String == "0.00" && rules?["borrowFeePercent"] as? String == "0.00")
        }
    }
}
