import Foundation
import Synchronization
import Hummingbird
import HummingbirdTesting
import Postgres
@testable import MockStock
import Testing
import TestSupport

/// A realistic league's week, each market day after the one before (the clock moved by
/// hand): fills at the quote with their spread and impact, an order filling in parts under
/// the volume cap, interest on the loan at each close, a margin call, and its forced sale at
/// the next close. With `MOCKSTOCK_WEEK=1` it prints the week as the player sees it.
@Suite("A realistic league's week")
struct RealisticWeekTests {
    private static func day(_ date: Date, plus days: Int) -> String {
        ISO8601DateFormatter.string(from: date.addingTimeInterval(Double(days) * 86_400), timeZone: .gmt, formatOptions: [.withFullDate])
    }

    @Test("a week: spread and impact on every fill, an order in parts under the cap, interest at each close, a margin call and the sale a close later")
    func week() async throws {
        let start = Date()
        let clock = MovableDate(ISO8601DateFormatter().string(from: start))
        let show = ProcessInfo.processInfo.environment["MOCKSTOCK_WEEK"] != nil
        let lines = Mutex<[String]>([])
        let log = { @Sendable (line: String) in lines.withLock { $0.append(line) } }
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            try await TestApp.run(on: database, configure: {
                $0.clock = clock.reader
                $0.orderSweepInterval = .milliseconds(50)
            }) { client in
                try await client.seedTradingMarket()
                try await client.storeYesterdaysVolume("AAPL", 1_000, close: "150")
                let token = try await client.register("weekly").token
                let rules = #"{"fillPrice":"quote","spreadBps":"20","impactCoefficient":"0.1","volumeCapPercent":"10","marginPercent":"50","maintenancePercent":"30","debitRatePercent":"8"}"#
                let (_, portfolio) = try await client.leagueWithRules(rules, startingCash: "20000", token: token)
                log("League rules: \(rules), starting cash 20,000")
                // The first close after the league began: today's at 16:00 UTC, or tomorrow's.
                let today16 = ISO8601DateFormatter().date(from: "\(Self.day(start, plus: 0))T16:00:00Z")!
                let first = start < today16 ? 0 : 1
                func day(_ index: Int) { clock.set("\(Self.day(start, plus: first + index))T10:00:00Z") }
                // The chores take the close a day move passes over alongside the orders' fills:
                // the week waits for it (as a real day would) before trading on.
                func closesTaken(_ count: Int) async throws {
                    for _ in 0..<200 {
                        let taken = try await pool.query("SELECT count(*) FROM margin_closes WHERE portfolio_id = \(portfolio)").decodeColumn(Int.self)
                        if taken == [count] { return }
                        try await Task.sleep(for: .milliseconds(25))
                    }
                    Issue.record("the close \(count) was not taken")
                }

                // Day 1: a buy of 90 at 150 pays the ask, 150 × (1 + 20/20000) = 150.15, and the impact
                // of 9 % of yesterday's 1,000 shares, 0.1 × 0.09² × 150 = 0.1215 → 0.12: 150.27.
                let bought = try await client.pricedTrade("buy", "AAPL", 90, portfolio: portfolio, token: token)
                #expect(bought.trade.price == "150.27" && bought.trade.pricing == .init(quote: "150.00", spread: "0.15", impact: "0.12"))
                #expect(bought.cash == "6475.70")
                // An order for 30 more: the cap (10 % of 1,000: 100 a day) leaves 10 today.
                let order = try await client.placeOrderOK(
                    #"{"symbol":"AAPL","side":"buy","quantity":30,"type":"limit","limitPrice":"152","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                    token: token)
                _ = try await client.eventually({ try await client.order(order.id, token: token) }) { $0.filledQuantity == 10 }
                // Day 2, after the first close: the cap leaves 100 again; the order's other 20 fill.
                day(1)
                let filled = try await client.eventually({ try await client.order(order.id, token: token) }) { $0.status == "filled" }
                #expect(filled.filledQuantity == 30)
                try await closesTaken(1)
                // 80 more (all the cap leaves today), borrowing: 150.15 + 0.1 × 0.08² × 150 = 0.096 → 0.10.
                let borrowed = try await client.pricedTrade("buy", "AAPL", 80, portfolio: portfolio, token: token)
                #expect(borrowed.trade.price == "150.25" && borrowed.cash == "-10049.00")
                // AAPL falls to 70: at that close equity is below 30 % of the position's value, a margin call.
                try await client.setPrice("AAPL", "70")
                day(2)
                let called = try await client.eventually({ try await client.kindedNotifications(token: token) }) {
                    $0.contains { $0.kind == "margin_call" }
                }
                #expect(called.contains { $0.kind == "margin_call" })
                // After the next close, still below: the 200 shares are sold at the bid, with their impact.
                day(3)
                let sold = try await client.eventually({
                    try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
                }) { $0.holdings.isEmpty }
                #expect(sold.holdings.isEmpty)

                struct Page: Decodable { let items: [PricedTradeBody] }
                let trades = try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: token).items.reversed()
                #expect(trades.map(\.source) == ["trade", "order", "order", "trade", "liquidation"])
                #expect(trades.map(\.quantity) == [90, 10, 20, 80, 200])
                let sale = try #require(trades.last)
                // The bid: 70 − 0.07 = 69.93; the impact of 20 % of the volume: 0.1 × 0.2² × 70 = 0.28.
                #expect(sale.side == "sell" && sale.price == "69.65" && sale.pricing == .init(quote: "70.00", spread: "0.07", impact: "0.28"))
                let notices = try await client.eventually({ try await client.kindedNotifications(token: token) }) {
                    $0.contains { $0.kind == "liquidated" }
                }
                #expect(notices.filter { $0.kind == "margin_call" }.count == 1 && notices.filter { $0.kind == "liquidated" }.count == 1)
                let interest = try await client.cashMovements(portfolio: portfolio, token: token).filter { $0.kind == "interest" }
                #expect(interest.map(\.amount).reversed() == ["-2.23", "-2.23"])

                for trade in trades {
                    log("\(trade.side) \(trade.quantity) AAPL at \(trade.price) — made by \(trade.source); quote \(trade.pricing.quote), spread \(trade.pricing.spread), impact \(trade.pricing.impact); amount \(trade.amount)")
                }
                for movement in interest.reversed() { log("interest \(movement.amount): \(movement.note)") }
                for notice in notices.reversed() where notice.kind != nil { log("notice (\(notice.kind!)): \(notice.title) — \(notice.body)") }
                let end = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token)
                log("cash at the end: \(end.cash)")
            }
            await pool.close()
        }
        if show { print(lines.withLock { $0 }.map { "WEEK: \($0)" }.joined(separator: "\n")) }
    }
}
