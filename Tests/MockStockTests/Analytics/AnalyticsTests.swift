import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct ValueHistoryBody: Decodable {
    struct Point: Decodable, Equatable {
        let date: String
        let cash: String
        let holdingsValue: String
        let netWorth: String
        let netInflow: String
    }

    let currency: String
    let points: [Point]
}

@Suite("Analytics")
struct AnalyticsTests {
    /// A portfolio with a week of history: see below.
    static func withHistory(_ body: @Sendable @escaping (any TestClientProtocol, _ token: String, _ portfolioID: Int) async throws -> Void) async throws {
        try await TemporaryDatabase.with { database in
            let setup = try await historySetup(database)
            try await TestApp.run(on: database) { client in try await body(client, setup.token, setup.portfolioID) }
        }
    }

    static func historySetup(_ database: TemporaryDatabase) async throws -> (token: String, portfolioID: Int) {
        let (token, portfolioID) = try await TestApp.run(on: database) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("historian").token
            try await client.setPrice("AAPL", "100")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token)
            try await client.setPrice("AAPL", "120")
            _ = try await client.tradeOK("sell", "AAPL", 4, token: token)
            let portfolio = try await client.decode(ReservedPortfolioIDBody.self, "/api/portfolio", token: token)
            return (token, portfolio.id)
        }
        // The same history, moved into the past: created on Sunday 2026-01-04 with 10,000;
        // 10 AAPL bought at 100 on Monday (with the first trades' rewards, 350, moved there too); 1,000
        // deposited on Wednesday, a day without a close; 4 sold at 120 on Thursday.
        let pool = PostgresConnectionPool(configuration: database.configuration)
        for statement: PostgresQuery in [
            "UPDATE portfolios SET created_at = '2026-01-04T09:00:00Z', cash = cash + 1000 WHERE id = \(portfolioID)",
            "UPDATE cash_movements SET created_at = '2026-01-04T10:00:00Z' WHERE portfolio_id = \(portfolioID) AND kind = 'starting_cash'",
            "UPDATE cash_movements SET created_at = '2026-01-05T15:00:00Z' WHERE portfolio_id = \(portfolioID) AND kind = 'reward'",
            "INSERT INTO cash_movements (portfolio_id, kind, amount, created_at) VALUES (\(portfolioID), 'deposit', 1000, '2026-01-07T12:00:00Z')",
            "UPDATE trades SET created_at = '2026-01-05T15:00:00Z' WHERE portfolio_id = \(portfolioID) AND side = 'buy'",
            "UPDATE trades SET created_at = '2026-01-08T15:00:00Z' WHERE portfolio_id = \(portfolioID) AND side = 'sell'",
            "INSERT INTO daily_bars (symbol, day, close) VALUES ('AAPL', '2026-01-02', 90), ('AAPL', '2026-01-05', 100), ('AAPL', '2026-01-06', 110), ('AAPL', '2026-01-08', 120)",
        ] {
            _ = try await pool.execute(statement)
        }
        await pool.close()
        return (token, portfolioID)
    }

    @Test("value history is rebuilt from the trades, cash movements and each day's close; weeks and months take their last day")
    func valueHistory() async throws {
        try await Self.withHistory { client, token, portfolioID in
            let path = "/api/portfolios/\(portfolioID)/history?from=2026-01-01&to=2026-01-09"
            let daily = try await client.decode(ValueHistoryBody.self, path, token: token)
            func point(_ date: String, _ cash: String, _ held: String, _ worth: String, _ inflow: String) -> ValueHistoryBody.Point {
                .init(date: date, cash: cash, holdingsValue: held, netWorth: worth, netInflow: inflow)
            }
            // From the portfolio's creation on; 01-07 and 01-09 carry the last close forward.
            #expect(daily.currency == "USD")
            #expect(daily.points == [
                point("2026-01-04", "10000.00", "0.00", "10000.00", "10000.00"),
                point("2026-01-05", "9350.00", "1000.00", "10350.00", "350.00"),
                point("2026-01-06", "9350.00", "1100.00", "10450.00", "0.00"),
                point("2026-01-07", "10350.00", "1100.00", "11450.00", "1000.00"),
                point("2026-01-08", "10830.00", "720.00", "11550.00", "0.00"),
                point("2026-01-09", "10830.00", "720.00", "11550.00", "0.00"),
            ])
            let weekly = try await client.decode(ValueHistoryBody.self, path + "&interval=week", token: token)
            #expect(weekly.points == [
                point("2026-01-04", "10000.00", "0.00", "10000.00", "10000.00"),
                point("2026-01-09", "10830.00", "720.00", "11550.00", "1350.00"),
            ])
            let monthly = try await client.decode(ValueHistoryBody.self, path + "&interval=month", token: token)
            #expect(monthly.points == [point("2026-01-09", "10830.00", "720.00", "11550.00", "11350.00")])
            // A range that starts later counts what was paid in before it as already there.
            let later = try await client.decode(ValueHistoryBody.self, "/api/portfolios/\(portfolioID)/history?from=2026-01-06&to=2026-01-07", token: token)
            #expect(later.points.map(\.netInflow) == ["0.00", "1000.00"])

            // Today is valued at live prices, like the portfolio.
            let live = try await client.decode(ValueHistoryBody.self, "/api/portfolios/\(portfolioID)/history?from=2026-01-09", token: token)
            let portfolio = try await client.decode(NetWorthBody.self, "/api/portfolio", token: token)
            #expect(live.points.last?.netWorth == portfolio.netWorth && live.points.last?.holdingsValue == "720.00")

            let other = try await client.register("snoop").token
            #expect(try await client.get(path, token: other).status == .notFound)
            for bad in ["interval=hour", "from=2026-13-01", "to=yesterday", "currency=EURO", "from=2026-01-09&to=2026-01-04"] {
                let response = try await client.get("/api/portfolios/\(portfolioID)/history?\(bad)", token: token)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(bad)")
            }
        }
    }

    @Test("past days' values are kept once computed, and not used once the history or a past price changes")
    func keptValues() async throws {
        try await TemporaryDatabase.with { database in
            let setup = try await Self.historySetup(database)
            let path = "/api/portfolios/\(setup.portfolioID)/history?from=2026-01-05&to=2026-01-07"
            let pool = PostgresConnectionPool(configuration: database.configuration)
            @Sendable func kept() async throws -> Int {
                try await pool.query("SELECT count(*) FROM portfolio_values WHERE portfolio_id = \(setup.portfolioID)").decodeColumn(Int.self)[0]
            }
            try await TestApp.run(on: database) { client in
                let first = try await client.decode(ValueHistoryBody.self, path, token: setup.token)
                #expect(first.points.map(\.holdingsValue) == ["1000.00", "1100.00", "1100.00"])
                // The three days and the day before them are kept.
                #expect(try await kept() == 4)
                // A past close corrected: the kept days are not used.
                _ = try await pool.execute("UPDATE daily_bars SET close = 115 WHERE symbol = 'AAPL' AND day = '2026-01-06'")
                let repriced = try await client.decode(ValueHistoryBody.self, path, token: setup.token)
                #expect(repriced.points.map(\.holdingsValue) == ["1000.00", "1150.00", "1150.00"])
                // A deposit recorded on a past day: the history after it changes.
                _ = try await pool.execute(
                    "INSERT INTO cash_movements (portfolio_id, kind, amount, created_at) VALUES (\(setup.portfolioID), 'deposit', 50, '2026-01-06T09:00:00Z')"
                )
                let deposited = try await client.decode(ValueHistoryBody.self, path, token: setup.token)
                #expect(deposited.points.map(\.cash) == ["9350.00", "9400.00", "10400.00"])
                #expect(deposited.points.map(\.netInflow) == ["350.00", "50.00", "1000.00"])
                #expect(try await kept() == 4)
            }
            await pool.close()
        }
    }

    @Test("/v2/account/portfolio/history: equity per day, profit and loss against the first day leaving out what was paid in since")
    func alpacaPortfolioHistory() async throws {
        struct History: Decodable {
            let timestamp: [Int]
            let equity: [Decimal]
            let profit_loss: [Decimal]
            let profit_loss_pct: [Decimal?]
            let base_value: Decimal
            let timeframe: String
        }
        try await Self.withHistory { client, token, _ in
            let history = try await client.decode(History.self, "/v2/account/portfolio/history?start=2026-01-04T00:00:00Z&end=2026-01-09", token: token)
            #expect(history.equity == [10000, 10350, 10450, 11450, 11550, 11550])
            #expect(history.base_value == 10000 && history.timeframe == "1D")
            // Paid in since the first day: 350 of rewards, then 1,000 deposited.
            #expect(history.profit_loss == [0, 0, 100, 100, 200, 200])
            #expect(history.profit_loss_pct == [0, 0, Decimal(string: "0.009662"), Decimal(string: "0.008811"),
                                                Decimal(string: "0.017621"), Decimal(string: "0.017621")])
            // New York's midnight of each day, as Alpaca's, though these tests run the `always` schedule.
            #expect(history.timestamp.first == Int(ISO8601DateFormatter().date(from: "2026-01-04T05:00:00Z")!.timeIntervalSince1970))
            #expect(Set(zip(history.timestamp, history.timestamp.dropFirst()).map { $1 - $0 }) == [86_400])
            let week = try await client.decode(History.self, "/v2/account/portfolio/history?period=2D&date_end=2026-01-08", token: token)
            #expect(week.equity == [10450, 11450, 11550] && week.base_value == 10450 && week.profit_loss == [0, 0, 100])
            for bad in ["timeframe=1Min", "period=3X", "extended_hours=true", "cashflow_types=ALL"] {
                let response = try await client.get("/v2/account/portfolio/history?\(bad)", token: token)
                #expect(response.status == .unprocessableContent, "\(bad)")
            }
        }
    }

    @Test("returns: time-weighted and money-weighted over a range with a mid-period deposit, against a benchmark")
    func performance() async throws {
        struct Body: Decodable {
            struct Benchmark: Decodable { let symbol: String; let twr: String? }
            let from: String?
            let to: String?
            let currency: String
            let twr: String?
            let irr: String?
            let benchmark: Benchmark?
        }
        try await Self.withHistory { client, token, portfolioID in
            let path = "/api/portfolios/\(portfolioID)/performance?from=2026-01-01&to=2026-01-09"
            let body = try await client.decode(Body.self, path + "&benchmark=aapl", token: token)
            #expect(body.from == "2026-01-04" && body.to == "2026-01-09" && body.currency == "USD")
            // Spreadsheet-style: each day's growth (V − F) / V of the day before, chained.
            let worth: [Decimal] = [10000, 10350, 10450, 11450, 11550, 11550]
            let paidIn: [Decimal] = [10000, 350, 0, 1000, 0, 0]
            var growth = Decimal(1)
            for day in 1..<worth.count { growth *= (worth[day] - paidIn[day]) / worth[day - 1] }
            var twr = growth - 1, rounded = Decimal()
            NSDecimalRound(&rounded, &twr, 6, .plain)
            #expect(body.twr.flatMap { Decimal(string: $0) } == rounded && body.twr == "0.018480")
            // The money-weighted rate makes the flows' present value zero: −10,000 at the start,
            // −350 a fifth of the way, −1,000 three fifths of the way, +11,550 at the end.
            let irr = try #require(body.irr.flatMap(Double.init))
            let value = -10_000 - 350 * pow(1 + irr, -0.2) - 1_000 * pow(1 + irr, -0.6) + 11_550 / (1 + irr)
            #expect(abs(value) < 0.01, "present value \(value) at \(irr)")
            #expect(irr > 0.0184 && irr < 0.0200)
            // AAPL from the close on or before the start (90 on 01-02) to the last (120 on 01-08).
            #expect(body.benchmark?.symbol == "AAPL" && body.benchmark?.twr == "0.333333")
            let market = try await client.decode(Body.self, path + "&benchmark=market", token: token)
            #expect(market.benchmark?.symbol == "market" && market.benchmark?.twr == "0.333333")
            #expect(try await client.decode(Body.self, path, token: token).benchmark == nil)

            let unknown = try await client.get(path + "&benchmark=NOSUCH", token: token)
            #expect(try decodeProblem(unknown).code == "unknown_symbol")
            let bad = try await client.get(path + "&benchmark=%27%3B--", token: token)
            #expect(try bad.status == .unprocessableContent && decodeProblem(bad).code == "validation_failed")
            let other = try await client.register("peeker").token
            #expect(try await client.get(path, token: other).status == .notFound)
        }
    }


    @Test("P&L: a partial sale after buys at two prices realizes differently by FIFO, LIFO and average; totals agree once closed")
    func profitAndLoss() async throws {
        struct Body: Decodable {
            struct Holding: Decodable { let symbol: String; let quantity: Int; let realized: String; let unrealized: String; let costBasis: String }
            let method: String
            let realized: String
            let unrealized: String
            let dividends: String
            let fees: String
            let holdings: [Holding]
        }
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("accountant").token
            try await client.setPrice("AAPL", "100")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token)
            try await client.setPrice("AAPL", "120")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token)
            try await client.setPrice("AAPL", "130")
            _ = try await client.tradeOK("sell", "AAPL", 10, token: token)
            let portfolio = try await client.decode(ReservedPortfolioIDBody.self, "/api/portfolio", token: token).id
            func pnl(_ method: String) async throws -> Body {
                try await client.decode(Body.self, "/api/portfolios/\(portfolio)/pnl?method=\(method)", token: token)
            }
            // Sold 10 at 130 (1,300) after 10 at 100 and 10 at 120; 10 left, worth 1,300.
            for (method, realized, basis) in [("fifo", "300.00", "1200.00"), ("lifo", "100.00", "1000.00"), ("average", "200.00", "1100.00")] {
                let body = try await pnl(method)
                let unrealized = (Decimal(1300) - Decimal(string: basis)!).moneyText
                #expect(body.method == method && body.realized == realized && body.unrealized == unrealized, "\(method)")
                #expect(body.holdings.map(\.symbol) == ["AAPL"] && body.holdings[0].quantity == 10 && body.holdings[0].costBasis == basis)
                #expect(body.fees == "0.00" && body.dividends == "0.00")
            }
            // Closed: every method has realized the same 400.
            _ = try await client.tradeOK("sell", "AAPL", 10, token: token)
            for method in ["fifo", "lifo", "average"] {
                let body = try await pnl(method)
                #expect(body.realized == "400.00" && body.unrealized == "0.00" && body.holdings[0].quantity == 0, "\(method)")
            }
            let bad = try await client.get("/api/portfolios/\(portfolio)/pnl?method=hifo", token: token)
            #expect(try bad.status == .unprocessableContent && decodeProblem(bad).code == "validation_failed")
            let other = try await client.register("auditor").token
            #expect(try await client.get("/api/portfolios/\(portfolio)/pnl", token: other).status == .notFound)
        }
    }


    @Test("correlation: the Pearson matrix of daily returns equals the direct formula; compare rebases each series to 100")
    func correlationAndComparison() async throws {
        struct CorrelationBody: Decodable {
            let from: String
            let to: String
            let symbols: [String]
            let observations: Int
            let matrix: [[String?]]
        }
        struct ComparisonBody: Decodable {
            struct Series: Decodable { let symbol: String; let points: [Point] }
            struct Point: Decodable, Equatable { let date: String; let value: String }
            let series: [Series]
        }
        let apple: [Decimal] = [100, 102, 101, 105, 104, 108]
        let one: [Decimal] = [10, 10.1, 10.3, 10.2, 10.6, 10.5]
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in try await client.seedTradingMarket() }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            for (symbol, closes) in [("AAPL", apple), ("ONE", one), ("TENTH", [Decimal](repeating: 1, count: 6))] {
                for (index, close) in closes.enumerated() {
                    _ = try await pool.execute(
                        "INSERT INTO daily_bars (symbol, day, close) VALUES (\(symbol), \("2026-02-0\(index + 2)")::date, \(close))"
                    )
                }
            }
            await pool.close()
            try await TestApp.run(on: database) { client in
                let token = try await client.register("statistician").token
                let body = try await client.decode(
                    CorrelationBody.self, "/api/analytics/correlation?symbols=aapl,ONE,TENTH&from=2026-02-01&to=2026-02-28", token: token)
                // The direct formula over the five daily returns.
                func returns(_ closes: [Decimal]) -> [Double] {
                    zip(closes, closes.dropFirst()).map { NSDecimalNumber(decimal: $1 / $0 - 1).doubleValue }
                }
                let x = returns(apple), y = returns(one)
                let mx = x.reduce(0, +) / 5, my = y.reduce(0, +) / 5
                let covariance = zip(x, y).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
                let pearson = covariance / (x.map { ($0 - mx) * ($0 - mx) }.reduce(0, +).squareRoot()
                                            * y.map { ($0 - my) * ($0 - my) }.reduce(0, +).squareRoot())
                #expect(body.symbols == ["AAPL", "ONE", "TENTH"] && body.observations == 5)
                #expect(body.matrix[0][0] == "1.0000" && body.matrix[1][1] == "1.0000")
                #expect(body.matrix[0][1] == String(format: "%.4f", pearson) && body.matrix[1][0] == body.matrix[0][1])
                // A price that never moves correlates with nothing.
                #expect(body.matrix[0][2] == nil && body.matrix[2][2] == nil)

                let compared = try await client.decode(
                    ComparisonBody.self, "/api/analytics/compare?symbols=ONE,AAPL&from=2026-02-03&to=2026-02-05", token: token)
                #expect(compared.series.map(\.symbol) == ["ONE", "AAPL"])
                #expect(compared.series[1].points == [
                    .init(date: "2026-02-03", value: "100.00"), .init(date: "2026-02-04", value: "99.0196"),
                    .init(date: "2026-02-05", value: "102.9412"),
                ])
                for bad in ["symbols=AAPL", "symbols=AAPL,NOSUCH", "symbols=AAPL,ONE&from=2026-03-01&to=2026-02-01",
                            "symbols=" + (1...21).map { "S\($0)" }.joined(separator: ","), "symbols=AAPL,ONE&from=2026-02-30"] {
                    let response = try await client.get("/api/analytics/correlation?\(bad)", token: token)
                    #expect([.unprocessableContent, .notFound].contains(response.status), "\(bad)")
                }
            }
        }
    }


    @Test("composition by symbol and sector, at a past day's closes and now at live prices, with weights of the holdings' value")
    func composition() async throws {
        struct Body: Decodable {
            struct Position: Decodable, Equatable { let symbol: String; let sector: String; let quantity: Int; let price: String; let value: String; let weight: String? }
            struct Sector: Decodable, Equatable { let sector: String; let value: String; let weight: String? }
            let date: String?
            let cash: String
            let holdingsValue: String
            let netWorth: String
            let bySymbol: [Position]
            let bySector: [Sector]
        }
        try await TemporaryDatabase.with { database in
            let setup = try await Self.historySetup(database)
            let pool = PostgresConnectionPool(configuration: database.configuration)
            _ = try await pool.execute("UPDATE instruments SET sector = 'Information Technology' WHERE symbol = 'AAPL'")
            await pool.close()
            try await TestApp.run(on: database) { client in
                let path = "/api/portfolios/\(setup.portfolioID)/composition"
                let past = try await client.decode(Body.self, path + "?date=2026-01-06", token: setup.token)
                #expect(past.date == "2026-01-06" && past.cash == "9350.00" && past.holdingsValue == "1100.00" && past.netWorth == "10450.00")
                #expect(past.bySymbol == [.init(symbol: "AAPL", sector: "Information Technology", quantity: 10, price: "110.00", value: "1100.00", weight: "1.000000")])
                let before = try await client.decode(Body.self, path + "?date=2026-01-03", token: setup.token)
                #expect(before.cash == "0.00" && before.bySymbol.isEmpty && before.bySector.isEmpty)

                // Now: 6 AAPL at 120 and 100 ONE bought at 1.
                _ = try await client.tradeOK("buy", "ONE", 100, token: setup.token)
                let now = try await client.decode(Body.self, path, token: setup.token)
                #expect(now.date == nil && now.holdingsValue == "820.00")
                #expect(now.bySymbol.map(\.symbol) == ["AAPL", "ONE"] && now.bySymbol.map(\.weight) == ["0.878049", "0.121951"])
                #expect(now.bySector == [.init(sector: "Information Technology", value: "720.00", weight: "0.878049"),
                                         .init(sector: "Unclassified", value: "100.00", weight: "0.121951")])
                let bad = try await client.get(path + "?date=yesterday", token: setup.token)
                #expect(bad.status == .unprocessableContent)
                // In euros at the day's rate (1.1 dollars a euro on 2026-01-06): weights unchanged.
                #expect(try await CurrencyTests.load(client, "Date,USD\n2026-01-05,1.1\n").status == .ok)
                let euros = try await client.decode(Body.self, path + "?date=2026-01-06&currency=EUR", token: setup.token)
                #expect(euros.holdingsValue == "1000.00" && euros.cash == "8500.00" && euros.bySymbol.first?.price == "100.00")
                #expect(euros.bySymbol.first?.weight == "1.000000")
            }
        }
    }


    @Test("a history in euros converts each day at that day's rate (the last published by then); returns come in euros too")
    func historyInEuros() async throws {
        try await Self.withHistory { client, token, portfolioID in
            let rates = "Date,USD,\n2026-01-09,1.25,\n2026-01-05,1.2,\n2026-01-02,1.1,\n"
            #expect(try await CurrencyTests.load(client, rates).status == .ok)
            let path = "/api/portfolios/\(portfolioID)/history?from=2026-01-01&to=2026-01-09&currency=eur"
            let history = try await client.decode(ValueHistoryBody.self, path, token: token)
            #expect(history.currency == "EUR")
            // 01-04 at 01-02's rate (1.1 dollars a euro), 01-05 at its own (1.2), 01-09 at 1.25.
            #expect(history.points.first == .init(date: "2026-01-04", cash: "9090.91", holdingsValue: "0.00", netWorth: "9090.91", netInflow: "9090.91"))
            #expect(history.points[1] == .init(date: "2026-01-05", cash: "7791.67", holdingsValue: "833.33", netWorth: "8625.00", netInflow: "291.67"))
            #expect(history.points.last == .init(date: "2026-01-09", cash: "8664.00", holdingsValue: "576.00", netWorth: "9240.00", netInflow: "0.00"))
            struct Returns: Decodable { let currency: String; let twr: String? }
            let returns = try await client.decode(
                Returns.self, "/api/portfolios/\(portfolioID)/performance?from=2026-01-05&to=2026-01-09&currency=EUR", token: token)
            #expect(returns.currency == "EUR" && returns.twr != nil)
            let unknown = try await client.get(path.replacingOccurrences(of: "eur", with: "GBP"), token: token)
            #expect(try unknown.status == .notFound && decodeProblem(unknown).code == "unknown_currency")
            let pnl = try await client.get("/api/portfolios/\(portfolioID)/pnl?currency=EUR", token: token)
            #expect(pnl.status == .unprocessableContent)
        }
    }

}

struct ReservedPortfolioIDBody: Decodable {
    let id: Int
}

struct NetWorthBody: Decodable {
    let netWorth: String
}

extension Decimal {
    /// As the API writes money: at least two digits after the point.
    var moneyText: String {
        let text = "\(self)"
        guard let dot = text.firstIndex(of: ".") else { return text + ".00" }
        return text.distance(from: dot, to: text.endIndex) < 3 ? text + "0" : text
    }
}
