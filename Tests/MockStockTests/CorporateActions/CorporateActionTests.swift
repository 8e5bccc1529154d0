import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct CorporateActionBody: Decodable, Equatable {
    let id: Int
    let symbol: String
    let kind: String
    let exDate: String
    let ratio: String?
    let amount: String?
    let source: String
}

struct CorporateActionListBody: Decodable {
    let items: [CorporateActionBody]
}

struct AdjustedChartBody: Decodable {
    struct Point: Decodable {
        let date: String
        let close: String
    }

    let adjusted: String
    let points: [Point]

    /// The largest day-to-day move of the close, as a fraction.
    var largestMove: Double {
        let closes = points.compactMap { Double($0.close) }
        return zip(closes, closes.dropFirst()).map { abs($1 / $0 - 1) }.max() ?? 0
    }
}

struct ActivityBody: Decodable {
    let id: String
    let type: String
    let symbol: String?
    let quantity: Int?
    let amount: String?
    let note: String?
}

struct ActivityPageBody: Decodable {
    let items: [ActivityBody]
    let nextBefore: String?
}

extension TestClientProtocol {
    /// Every activity of the personal portfolio, read `limit` at a time.
    func allActivities(token: String, limit: Int) async throws -> [ActivityBody] {
        var items: [ActivityBody] = []
        var cursor: String? = nil
        repeat {
            let after = cursor.map { "&before=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" } ?? ""
            let page = try await decode(ActivityPageBody.self, "/api/activities?limit=\(limit)\(after)", token: token)
            items += page.items
            cursor = page.nextBefore
        } while cursor != nil
        return items
    }
}

struct StockDetailBody: Decodable {
    let price: String
    let yearChangePercent: String?
    let yearHigh: String?
    let yearLow: String?
}

@Suite("Corporate actions")
struct CorporateActionTests {
    /// The demo market (real prices 2018-04-23 .. 2021-04-21) seeded as `make run` does.
    static func withDemoMarket(
        configure: @escaping @Sendable (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let seeder = MarketSeeder(pool: pool)
            let root = TestApp.repositoryRoot.appendingPathComponent("data")
            for file in ["sp500-constituents.csv", "extra-instruments.csv"] {
                _ = try await seeder.seedInstruments(csv: String(contentsOf: root.appendingPathComponent(file), encoding: .utf8))
            }
            _ = try await seeder.seedPrices(try FileChunks(path: root.appendingPathComponent("demo-prices-daily.csv.gz").path))
            await pool.close()
            try await TestApp.run(on: database, configure: configure, body)
        }
    }

    @Test("Apple across its 4-for-1 split of 2020-08-31: no cliff in the chart, a split-adjusted year and 52-week range")
    func appleSplit() async throws {
        try await Self.withDemoMarket { client in
            let token = try await client.register("analyst").token
            let chart = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y", token: token)
            #expect(chart.adjusted == "split" && chart.points.last?.date == "2021-04-21")
            #expect(chart.largestMove < 0.15)
            // As traded, the split is a 75 % fall in a day.
            let raw = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y&adjusted=none", token: token)
            #expect(raw.largestMove > 0.7)
            // Total return: the last close is today's price; earlier ones are lower still (dividends paid since).
            let total = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y&adjusted=total", token: token)
            #expect(total.points.last?.close == chart.points.last?.close)
            #expect(Double(total.points[0].close)! < Double(chart.points[0].close)!)

            let stock = try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: token)
            // 133.50 against 268.37 / 4 = 67.0925 a year earlier: +98.98 %, not −50 %.
            #expect(stock.price == "133.50" && stock.yearChangePercent == "98.98")
            #expect(Double(stock.yearHigh!)! < 150 && Double(stock.yearLow!)! > 50)

            let actions = try await client.decode(CorporateActionListBody.self, "/api/stock/AAPL/corporate-actions", token: token)
            #expect(actions.items.contains { $0.kind == "split" && $0.exDate == "2020-08-31" && $0.ratio == "4" && $0.source == "prices" })
            #expect(actions.items.contains { $0.kind == "dividend" && $0.amount == "0.205" })
            #expect(actions.items.map(\.exDate) == actions.items.map(\.exDate).sorted(by: >))
            let bad = try await client.get("/api/stock/AAPL/chart?range=1y&adjusted=maybe", token: token)
            #expect(try bad.status == .unprocessableContent && decodeProblem(bad).code == "validation_failed")
        }
    }

    @Test("admins add splits and dividends, which adjust charts; bad ones are 422 or 404 and change nothing")
    func adminActions() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            let player = try await client.register("viewer").token
            let before = try await client.decode(AdjustedChartBody.self, "/api/stock/MSFT/chart?range=1m", token: player)
            #expect(before.points.allSatisfy { $0.close == "250.00" })

            for body in [#"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"0"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"-2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"2","amount":"1"}"#,
                         #"{"symbol":"MSFT","kind":"dividend","exDate":"2021-04-10","amount":"-1"}"#,
                         #"{"symbol":"MSFT","kind":"merger","exDate":"2021-04-10","ratio":"2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-02-30","ratio":"2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"tomorrow","ratio":"2"}"#] {
                let response = try await client.send(.post, "/api/admin/corporate-actions", body: body, token: admin)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(body)")
            }
            let unknown = try await client.send(.post, "/api/admin/corporate-actions",
                                                body: #"{"symbol":"NOPE","kind":"split","exDate":"2021-04-10","ratio":"2"}"#, token: admin)
            #expect(try decodeProblem(unknown).code == "unknown_symbol")
            let notAdmin = try await client.send(.post, "/api/admin/corporate-actions",
                                                 body: #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"2"}"#, token: player)
            #expect(notAdmin.status == .forbidden)
            #expect(try await client.decode(CorporateActionListBody.self, "/api/stock/MSFT/corporate-actions", token: player).items.isEmpty)

            let split = #"{"symbol":"msft","kind":"split","exDate":"2021-04-10","ratio":"2"}"#
            let created = try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin)
            #expect(created.status == .created)
            let action = try JSONDecoder().decode(CorporateActionBody.self, from: Data(buffer: created.body))
            #expect(action.symbol == "MSFT" && action.ratio == "2" && action.amount == nil && action.source == "admin")
            #expect(try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin).status == .conflict)

            // Before the split, one old share is two of today's: the chart halves those closes.
            let after = try await client.decode(AdjustedChartBody.self, "/api/stock/MSFT/chart?range=1m", token: player)
            #expect(after.points.filter { $0.date < "2021-04-10" }.allSatisfy { $0.close == "125.00" })
            #expect(after.points.filter { $0.date >= "2021-04-10" }.allSatisfy { $0.close == "250.00" })
        }
    }

    @Test("loading prices with dividend and split columns records each action once, however often the file is loaded")
    func actionsFromPrices() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            let csv = "symbol,date,open,high,low,close,volume,dividend,split\r\n"
                + "AAL,2021-04-22,10,10,10,10,100,0.25,1\r\nAAL,2021-04-23,10,10,10,5,100,0,2\r\n"
            for _ in 0..<2 {
                let response = try await client.send(.post, "/api/admin/prices", body: csv, contentType: "text/csv", token: admin)
                #expect(response.status == .ok)
            }
            let actions = try await client.decode(CorporateActionListBody.self, "/api/stock/AAL/corporate-actions", token: admin).items
            #expect(actions.map(\.kind) == ["split", "dividend"])
            #expect(actions.map(\.exDate) == ["2021-04-23", "2021-04-22"])
            #expect(actions.first?.ratio == "2" && actions.last?.amount == "0.25")
        }
    }
}

@Suite("Corporate actions applied to portfolios")
struct AppliedCorporateActionTests {
    @Test("replaying Apple across 2020-08-31: a holder of 10 holds 40 with a quarter of the average cost, once")
    func replayedSplit() async throws {
        try await CorporateActionTests.withDemoMarket(configure: {
            $0.quoteSource = .replay
            $0.replay.startDay = "2020-08-27"
            // A trading day every two seconds; look for a new day every second.
            $0.replay.tradingDaysPerMinute = 30
            $0.replay.checkSeconds = 1
            $0.orderSweepInterval = .milliseconds(200)
        }) { client in
            let token = try await client.register("holder").token
            var stock = try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: token)
            for _ in 0..<50 where stock.price == "133.50" {
                try await Task.sleep(for: .milliseconds(100))
                stock = try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: token)
            }
            let bought = try await client.tradeOK("buy", "AAPL", 10, token: token)
            let price = try #require(Decimal(string: bought.trade.price))
            #expect(price > 400)
            let order = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":3,"type":"limit","limitPrice":"100","timeInForce":"gtc"}"#, token: token)

            var portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            for _ in 0..<150 where portfolio.holdings.first?.quantity != 40 {
                try await Task.sleep(for: .milliseconds(100))
                portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            }
            let holding = try #require(portfolio.holdings.first)
            #expect(holding.quantity == 40)
            #expect(holding.averageCost == (price / 4).rounded(4).moneyString)
            // The resting order now asks for 12 shares at 25.00: the same money.
            let adjusted = try await client.order(order.id, token: token)
            #expect(adjusted.quantity == 12 && adjusted.limitPrice == "25.00" && adjusted.status == "new")
            let notices = try await client.decode(NotificationPageBody.self, "/api/notifications", token: token)
            #expect(notices.items.contains { $0.title == "AAPL split 4-for-1" && $0.body.contains("You now hold 40 shares") })
            // The history explains the change of quantity: 10 bought, 30 more by the split.
            let activities = try await client.allActivities(token: token, limit: 50)
            #expect(activities.first { $0.type == "split" }?.quantity == 30)
            #expect(activities.first { $0.type == "split" }?.note == "AAPL split 4-for-1: 10 → 40 shares")
            #expect(activities.first { $0.type == "fill" }?.quantity == 10)
            // Later sweeps and days change nothing.
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: token).holdings.first?.quantity == 40)
        }
    }

    @Test("an admin's 3-for-2 split dated today: net worth unchanged, cash in lieu for the half share, the quote divided once")
    func splitLeavesNetWorth() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("splitter").token
            _ = try await client.tradeOK("buy", "AAPL", 5, token: token)
            let before = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            let admin = try await client.adminToken()
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            let split = #"{"symbol":"AAPL","kind":"split","exDate":"\#(today)","ratio":"1.5"}"#
            #expect(try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin).status == .created)
            var after = before
            for _ in 0..<100 where after.holdings.first?.quantity == 5 {
                try await Task.sleep(for: .milliseconds(50))
                after = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            }
            // 5 × 1.5 = 7.5: 7 shares and half a share's worth (at 150 / 1.5 = 100) in cash.
            #expect(after.holdings.first?.quantity == 7 && after.holdings.first?.price == "100.00")
            #expect(after.netWorth == before.netWorth)
            let moves = try await client.decode(CashMovementPageBody.self, "/api/cash-movements", token: token).items
            #expect(moves.first { $0.kind == "cash_in_lieu" }?.amount == "50.00")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: token).price == "100.00")
        }
    }

    @Test("a dividend pays quantity × amount exactly once with two server processes and a restart; a short pays it")
    func dividendOnce() async throws {
        try await TemporaryDatabase.with { database in
            let fast: @Sendable (inout AppConfiguration) -> Void = { $0.orderSweepInterval = .milliseconds(50) }
            let (token, league) = try await TestApp.run(on: database, configure: fast) { first in
                try await first.seedTradingMarket()
                let token = try await first.register("income").token
                _ = try await first.tradeOK("buy", "AAPL", 7, token: token)
                let (league, portfolio) = try await first.leagueWithRules(#"{"allowShortSelling":true}"#, token: token)
                _ = try await first.tradeOK("sell", "AAPL", 4, token: token, portfolioID: portfolio)
                let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
                try await TestApp.run(on: database, configure: fast) { second in
                    let admin = try await second.adminToken()
                    let dividend = #"{"symbol":"AAPL","kind":"dividend","exDate":"\#(today)","amount":"0.205"}"#
                    #expect(try await second.send(.post, "/api/admin/corporate-actions", body: dividend, token: admin).status == .created)
                    for _ in 0..<100 {
                        let moves = try await second.decode(CashMovementPageBody.self, "/api/cash-movements", token: token).items
                        if moves.contains(where: { $0.kind == "dividend" }) { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    try await Task.sleep(for: .milliseconds(300))
                }
                return (token, portfolio)
            }
            // A restart on the same database applies nothing again.
            try await TestApp.run(on: database, configure: fast) { client in
                try await Task.sleep(for: .milliseconds(300))
                let personal = try await client.decode(CashMovementPageBody.self, "/api/cash-movements", token: token).items
                #expect(personal.filter { $0.kind == "dividend" }.map(\.amount) == ["1.435"])
                let short = try await client.decode(CashMovementPageBody.self, "/api/cash-movements?portfolioId=\(league)", token: token).items
                #expect(short.filter { $0.kind == "dividend" }.map(\.amount) == ["-0.82"])
                let notices = try await client.decode(NotificationPageBody.self, "/api/notifications", token: token)
                #expect(notices.items.filter { $0.title == "AAPL paid a dividend" }.count == 2)
                // Newest first, a page at a time, each activity once: the dividend, the league
                // founder's reward, the first trade's reward with its purchase, the starting cash.
                let activities = try await client.allActivities(token: token, limit: 1)
                #expect(activities.map(\.type) == ["dividend", "reward", "reward", "fill", "starting_cash"])
                #expect(Set(activities.map(\.id)).count == 5)
                #expect(activities.first { $0.type == "fill" }?.amount == "-1050.00")
                let bad = try await client.get("/api/activities?before=yesterday", token: token)
                #expect(bad.status == .unprocessableContent)
            }
        }
    }

    @Test("notices write money as players read it (money_text): a dividend received and one a short pays, in dollars")
    func moneyInNotices() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("notice_money").token
            _ = try await client.tradeOK("buy", "AAPL", 7, token: token)
            let (_, portfolio) = try await client.leagueWithRules(#"{"allowShortSelling":true}"#, token: token)
            _ = try await client.tradeOK("sell", "AAPL", 4, token: token, portfolioID: portfolio)
            let admin = try await client.adminToken()
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            let dividend = #"{"symbol":"AAPL","kind":"dividend","exDate":"\#(today)","amount":"1500.25"}"#
            #expect(try await client.send(.post, "/api/admin/corporate-actions", body: dividend, token: admin).status == .created)
            var bodies: [String] = []
            for _ in 0..<100 where bodies.count < 2 {
                try await Task.sleep(for: .milliseconds(50))
                bodies = try await client.decode(NotificationPageBody.self, "/api/notifications", token: token).items
                    .filter { $0.title == "AAPL paid a dividend" }.map(\.body)
            }
            // 7 × 1,500.25 received; the short of 4 pays 6,001.00 out of the cash it has.
            #expect(bodies.contains("You received $10,501.75 for 7 shares ($1500.25 a share)."), "\(bodies)")
            #expect(bodies.contains("Your short position paid $6,001.00 for 4 shares ($1500.25 a share)."), "\(bodies)")
        }
    }

    @Test("a 1-for-10 split closes an order it leaves no whole share, with the reason, and releases what it held (close_orders); the others are scaled")
    func reverseSplitClosesOrders() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("reverse_split").token
            _ = try await client.tradeOK("buy", "AAPL", 20, token: token)
            let small = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"sell","quantity":5,"type":"limit","limitPrice":"170"}"#, token: token)
            let big = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"sell","quantity":10,"type":"limit","limitPrice":"170"}"#, token: token)
            let admin = try await client.adminToken()
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            let split = #"{"symbol":"AAPL","kind":"split","exDate":"\#(today)","ratio":"0.1"}"#
            #expect(try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin).status == .created)
            var closed = try await client.order(small.id, token: token)
            for _ in 0..<100 where closed.status == "new" {
                try await Task.sleep(for: .milliseconds(50))
                closed = try await client.order(small.id, token: token)
            }
            #expect(closed.status == "canceled" && closed.rejectReason?.hasSuffix("split left the order no whole share.") == true, "\(closed)")
            let scaled = try await client.order(big.id, token: token)
            #expect(scaled.status == "new" && scaled.quantity == 1 && scaled.limitPrice == "1700.00", "\(scaled)")
            // 20 shares became 2; one of them is held back by the scaled order, the other is free to sell.
            let sale = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
            #expect(sale.status == .ok, "\(String(buffer: sale.body))")
            let again = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
            #expect(try decodeProblem(again).code == "insufficient_shares")
        }
    }
}
