import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

@Suite("Practice portfolios")
struct PracticePortfolioTests {
    @Test("created with a starting cash, currency and start day; renamed; deleted; never the personal portfolio; no achievements")
    func lifecycle() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("practiser").token
            let created = try await client.send(.post, "/api/portfolios",
                body: #"{"name":"  What if 2026  ","startingCash":"5000","currency":"eur","startedAt":"2026-01-05"}"#, token: token)
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let practice = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body))
            #expect(practice.name == "What if 2026" && practice.cash == "5000.00" && practice.practice && practice.baseCurrency == "EUR")
            let all = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            #expect(all.map(\.practice) == [false, true] && all[0].cash == "10000.00")

            // Trading in it: the personal portfolio and achievements are untouched.
            try await client.setPrice("AAPL", "100")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token, portfolioID: practice.id)
            #expect(try await client.decode(ReservedPortfolioBody.self, "/api/portfolio", token: token).cash == "10000.00")
            let achievements = try await client.decode([AchievementBody].self, "/api/achievements", token: token)
            #expect(achievements.allSatisfy { $0.earnedAt == nil && $0.progress == 0 })

            // Its history starts on its start day, with its starting cash (values in euros need rates).
            #expect(try await CurrencyTests.load(client, "Date,USD\n2026-01-02,1.25\n").status == .ok)
            let history = try await client.decode(
                ValueHistoryBody.self, "/api/portfolios/\(practice.id)/history?to=2026-01-06", token: token)
            #expect(history.currency == "EUR")
            #expect(history.points.first == .init(date: "2026-01-05", cash: "4000.00", holdingsValue: "0.00", netWorth: "4000.00", netInflow: "4000.00"))

            let renamed = try await client.send(.patch, "/api/portfolios/\(practice.id)", body: #"{"name":"Replay"}"#, token: token)
            #expect(try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: renamed.body)).name == "Replay")
            let other = try await client.register("neighbour").token
            #expect(try await client.send(.patch, "/api/portfolios/\(practice.id)", body: #"{"name":"Mine"}"#, token: other).status == .notFound)
            #expect(try await client.delete("/api/portfolios/\(practice.id)", token: other).status == .notFound)
            #expect(try await client.delete("/api/portfolios/\(all[0].id)", token: token).status == .notFound)
            for (body, code) in [(#"{"startingCash":"1"}"#, "validation_failed"), (#"{"name":""}"#, "validation_failed"), (#"{"currency":"euro"}"#, "validation_failed")] {
                let refused = try await client.send(.patch, "/api/portfolios/\(practice.id)", body: body, token: token)
                #expect(try refused.status == .unprocessableContent && decodeProblem(refused).code == code, "\(body)")
            }
            // Its trades as CSV, oldest first, in the import format.
            _ = try await client.tradeOK("sell", "AAPL", 4, token: token, portfolioID: practice.id)
            let exported = try await client.get("/api/portfolios/\(practice.id)/export", token: token)
            #expect(exported.headers[.contentType] == "text/csv; charset=utf-8")
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            #expect(String(buffer: exported.body) == "date,symbol,side,quantity,price,fee\n\(today),AAPL,buy,10,100,0\n\(today),AAPL,sell,4,100,0\n")
            #expect(try await client.get("/api/portfolios/\(practice.id)/export", token: other).status == .notFound)

            #expect(try await client.delete("/api/portfolios/\(practice.id)", token: token).status == .noContent)
            #expect(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).count == 1)
        }
    }

    @Test("which portfolio is which: one personal portfolio, league and practice ones; a request without portfolioId means the personal one")
    func portfolioKinds() async throws {
        try await TemporaryDatabase.with { database in
            let userID = try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let registered = try await client.register("kinds")
                let token = registered.token
                let (_, leagueID) = try await client.leagueWithRules("{}", token: token)
                let practice = try await client.send(.post, "/api/portfolios", body: #"{"name":"Try"}"#, token: token)
                #expect(practice.status == .created)
                let all = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
                #expect(all.map(\.kind) == ["personal", "practice", "league"])
                #expect(all.map(\.practice) == [false, true, false] && all[2].id == leagueID)
                // Without portfolioId a trade and an order go to the personal portfolio.
                try await client.setPrice("AAPL", "100")
                let bought = try await client.tradeOK("buy", "AAPL", 2, token: token)
                #expect(bought.cash == "10050.00", "10,000 and 250 for founding a league, less 200")
                let order = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"50"}"#, token: token)
                #expect(order.portfolioId == all[0].id)
                return registered.user.id
            }
            // The database keeps it so: one personal portfolio a user; a league portfolio has a league.
            let pool = PostgresConnectionPool(configuration: database.configuration)
            await #expect(throws: PostgresError.self) {
                try await pool.execute("INSERT INTO portfolios (user_id, name, cash) VALUES (\(userID), 'Second', 1)")
            }
            await #expect(throws: PostgresError.self) {
                try await pool.execute("INSERT INTO portfolios (user_id, kind, name, cash) VALUES (\(userID), 'league', 'Nowhere', 1)")
            }
            let named = try await pool.query(
                "SELECT portfolio_named('personal', 1, NULL), portfolio_named('practice', 2, NULL), portfolio_named('practice', 2, 2), portfolio_named('personal', 1, 2)"
            ).decode((Bool, Bool, Bool, Bool).self)
            await pool.close()
            #expect(named.first! == (true, false, true, false))
        }
    }

    @Test("at most ten practice portfolios; bad ones are refused")
    func limits() async throws {
        try await TestApp.run { client in
            let token = try await client.register("collector").token
            for index in 1...10 {
                #expect(try await client.send(.post, "/api/portfolios", body: #"{"name":"P\#(index)"}"#, token: token).status == .created)
            }
            let eleventh = try await client.send(.post, "/api/portfolios", body: #"{"name":"P11"}"#, token: token)
            #expect(try eleventh.status == .conflict && decodeProblem(eleventh).code == "too_many_portfolios")
            let other = try await client.register("beginner").token
            for body in [#"{"name":""}"#, #"{"name":"x","startingCash":"0"}"#, #"{"name":"x","startingCash":"1.001"}"#,
                         #"{"name":"x","startedAt":"2999-01-01"}"#, #"{"name":"x","startedAt":"1900-01-01"}"#, #"{"name":"x","currency":"EU"}"#] {
                #expect(try await client.send(.post, "/api/portfolios", body: body, token: other).status == .unprocessableContent, "\(body)")
            }
        }
    }

    @Test("deposits and withdrawals: in date order, never more than the free cash")
    func cash() async throws {
        try await TestApp.run { client in
            let token = try await client.register("saver").token
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"Savings","startingCash":"1000","startedAt":"2026-01-05"}"#, token: token)
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            let deposit = try await client.send(.post, "/api/portfolios/\(id)/cash", body: #"{"amount":"250.50","at":"2026-01-10"}"#, token: token)
            #expect(deposit.status == .created, "\(String(buffer: deposit.body))")
            struct Movement: Decodable { let kind: String; let amount: String }
            #expect(try JSONDecoder().decode(Movement.self, from: Data(buffer: deposit.body)).kind == "deposit")
            for (body, status, code) in [
                (#"{"amount":"-2000"}"#, HTTPResponse.Status.unprocessableContent, "insufficient_funds"),
                (#"{"amount":"10","at":"2026-01-07"}"#, .unprocessableContent, "out_of_order"),
                (#"{"amount":"10","at":"2999-01-01"}"#, .unprocessableContent, "validation_failed"),
                (#"{"amount":"0"}"#, .unprocessableContent, "validation_failed"),
            ] {
                let refused = try await client.send(.post, "/api/portfolios/\(id)/cash", body: body, token: token)
                #expect(try refused.status == status && decodeProblem(refused).code == code, "\(body)")
            }
            let withdrawal = try await client.send(.post, "/api/portfolios/\(id)/cash", body: #"{"amount":"-50"}"#, token: token)
            #expect(withdrawal.status == .created)
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            #expect(portfolios.first { $0.id == id }?.cash == "1200.50")
            let personal = portfolios.first { !$0.practice }!.id
            #expect(try await client.send(.post, "/api/portfolios/\(personal)/cash", body: #"{"amount":"5"}"#, token: token).status == .notFound)
        }
    }

    /// AAL closes 10, 12 (Friday), a 2-for-1 split on Monday (close 6), a 0.50 dividend on
    /// Tuesday (close 6) and 7 on Wednesday (in 2018, before the market fixture): history loaded with prices, applied by no one
    /// but the back-dated trades that reach it.
    static let splitAndDividend = "symbol,date,open,high,low,close,volume,dividend,split\n"
        + "AAL,2018-01-04,10,10,10,10,100,0,1\nAAL,2018-01-05,12,12,12,12,100,0,1\nAAL,2018-01-08,6,6,6,6,100,0,2\n"
        + "AAL,2018-01-09,6,6,6,6,100,0.5,1\nAAL,2018-01-10,7,7,7,7,100,0,1\n"

    @Test("every feature counts the same market day: in New York's evening, past midnight UTC, it is still New York's")
    func oneMarketDay() async throws {
        let clock = MovableDate("2026-11-26T02:00:00Z")  // 21:00 on Wednesday 25 November in New York
        try await TestApp.run(configure: {
            $0.marketHours = .nyse
            $0.clock = clock.reader
        }) { client in
            let admin = try await client.seedMarket()
            // Closes stored for New York's Wednesday and UTC's Thursday.
            let closes = "symbol,date,close\nAAPL,2026-11-25,150\nAAPL,2026-11-26,151\n"
            #expect(try await client.send(.post, "/api/admin/prices", body: closes, contentType: "text/csv", token: admin).status == .ok)
            let token = try await client.register("evening").token
            // A practice portfolio may start on the market's day at the latest, not on UTC's.
            let utcDay = try await client.send(.post, "/api/portfolios", body: #"{"name":"UTC","startedAt":"2026-11-26"}"#, token: token)
            #expect(utcDay.status == .unprocessableContent)
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"NY","startedAt":"2026-11-25"}"#, token: token)
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            // A back-dated trade must come before that same day.
            let sameDay = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(id),"at":"2026-11-25"}"#, token: token)
            #expect(sameDay.status == .unprocessableContent)
            #expect(String(buffer: sameDay.body).contains("before the market's day (2026-11-25)"))
        }
    }

    @Test("a practice portfolio starts on a day with prices: by default the history's first, so any back-dated trade is in order")
    func startsWithTheHistory() async throws {
        try await TestApp.run { client in
            _ = try await client.seedMarket()
            let token = try await client.register("backtester").token
            let (first, last) = (MarketFixture.days.first!, MarketFixture.lastDay)
            let early = try await client.send(.post, "/api/portfolios", body: #"{"name":"Too early","startedAt":"2019-01-02"}"#, token: token)
            #expect(early.status == .unprocessableContent)
            #expect(try decodeProblem(early).detail == "startedAt must be a day with prices, from \(first) to \(last) (YYYY-MM-DD).")
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"Whenever"}"#, token: token)
            #expect(created.status == .created)
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            let bought = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(id),"at":"2020-03-02"}"#, token: token)
            #expect(bought.status == .ok, "\(String(buffer: bought.body))")
            let starting = try await client.decode(CashMovementPageBody.self, "/api/cash-movements?portfolioId=\(id)", token: token).items.last
            #expect(starting?.createdAt.hasPrefix(first) == true)
        }
    }

    @Test("back-dated trades fill at the day's close in date order and receive the splits and dividends since")
    func backdatedTrades() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            #expect(try await client.send(.post, "/api/admin/prices", body: Self.splitAndDividend, contentType: "text/csv", token: admin).status == .ok)
            let token = try await client.register("replayer").token
            let created = try await client.send(.post, "/api/portfolios", body: #"{"name":"2018","startingCash":"1000","startedAt":"2018-01-04"}"#, token: token)
            let id = try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            func trade(_ side: String, _ amount: Int, at day: String, portfolio: Int? = nil) async throws -> TestResponse {
                try await client.trade(side, #"{"symbol":"AAL","amount":\#(amount),"portfolioId":\#(portfolio ?? id),"at":"\#(day)"}"#, token: token)
            }
            func result(_ response: TestResponse) throws -> TradeResultBody {
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                return try JSONDecoder().decode(TradeResultBody.self, from: Data(buffer: response.body))
            }

            // 10 shares at Thursday's close are 20 after the split, and earn 20 × 0.50: cash 1000 − 100 + 10.
            let bought = try result(try await trade("buy", 10, at: "2018-01-04"))
            #expect(bought.trade.price == "10.00" && bought.trade.quantity == 10 && bought.trade.createdAt.hasPrefix("2018-01-04T"))
            #expect(bought.cash == "910.00" && bought.position == .init(symbol: "AAL", quantity: 20))
            // Selling 4 on Friday at 12 leaves 6 old shares: 12 new ones, and a dividend of 6 rather than 10.
            let sold = try result(try await trade("sell", 4, at: "2018-01-05"))
            #expect(sold.cash == "954.00" && sold.position.quantity == 12, "1000 − 100 + 48 + 12 × 0.50")

            // Not before the latest trade, not on a day without a close, not today, nowhere but a practice portfolio.
            let personal = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).first { !$0.practice }!.id
            for (response, code) in [(try await trade("buy", 1, at: "2018-01-04"), "out_of_order"),
                                     (try await trade("buy", 1, at: "2018-01-06"), "no_close"),
                                     (try await trade("buy", 1, at: "2999-01-01"), "validation_failed"),
                                     (try await trade("buy", 1, at: "2018-1-8"), "validation_failed"),
                                     (try await trade("buy", 1, at: "2018-01-08", portfolio: personal), "validation_failed")] {
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == code, "\(String(buffer: response.body))")
            }
            let early = try await client.send(.post, "/api/portfolios/\(id)/cash", body: #"{"amount":"5","at":"2018-01-04"}"#, token: token)
            #expect(try decodeProblem(early).code == "out_of_order")

            // On Monday the 6 of Tuesday's dividends are not there yet: 954 − 6 buys 158 at 6, not 159.
            let tooMuch = try await trade("buy", 159, at: "2018-01-08")
            #expect(try tooMuch.status == .unprocessableContent && decodeProblem(tooMuch).code == "insufficient_funds")
            let order = try await client.send(.post, "/api/orders",
                body: #"{"symbol":"AAL","side":"buy","quantity":158,"portfolioId":\#(id),"at":"2018-01-08","clientOrderId":"monday"}"#, token: token)
            #expect(order.status == .created, "\(String(buffer: order.body))")
            let filled = try JSONDecoder().decode(OrderBody.self, from: Data(buffer: order.body))
            #expect(filled.status == "filled" && filled.filledAveragePrice == "6.00" && filled.filledAt?.hasPrefix("2018-01-08T") == true)
            let limit = try await client.send(.post, "/api/orders",
                body: #"{"symbol":"AAL","side":"buy","quantity":1,"type":"limit","limitPrice":"5","portfolioId":\#(id),"at":"2018-01-10"}"#, token: token)
            #expect(try decodeProblem(limit).code == "validation_failed")

            // 12 + 158 shares; cash 954 − 948 + 158 × 0.50.
            let portfolio = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(id)", token: token)
            #expect(portfolio.cash == "85.00")
            let history = try await client.decode(
                ValueHistoryBody.self, "/api/portfolios/\(id)/history?from=2018-01-04&to=2018-01-10", token: token)
            let worth = Dictionary(history.points.map { ($0.date, $0.netWorth) }) { first, _ in first }
            #expect(worth["2018-01-04"] == "1000.00" && worth["2018-01-05"] == "1020.00" && worth["2018-01-08"] == "1020.00")
            #expect(worth["2018-01-09"] == "1105.00" && worth["2018-01-10"] == "1275.00", "170 × 7 + 85")
            struct ProfitBody: Decodable {
                struct Holding: Decodable { let symbol: String; let quantity: Int }
                let realized: String, unrealized: String, dividends: String, holdings: [Holding]
            }
            let profit = try await client.decode(ProfitBody.self, "/api/portfolios/\(id)/pnl?method=fifo", token: token)
            #expect(profit.realized == "8.00" && profit.dividends == "85.00", "48 − 4 × 10; 6 + 79")
            // The split reached both the buy and the sale: 170 shares, costing 60 + 948, and
            // paid in + gains + dividends make the net worth at today's price.
            struct Worth: Decodable { let netWorth: String }
            let now = try await client.decode(Worth.self, "/api/portfolio?portfolioId=\(id)", token: token)
            let explained = 1000 + Decimal(string: profit.realized)! + Decimal(string: profit.unrealized)! + Decimal(string: profit.dividends)!
            #expect(profit.holdings.map(\.quantity) == [170] && explained == Decimal(string: now.netWorth)!, "\(profit)")
            let exported = try await client.get("/api/portfolios/\(id)/export", token: token)
            #expect(String(buffer: exported.body) == "date,symbol,side,quantity,price,fee\n2018-01-04,AAL,buy,10,10,0\n2018-01-05,AAL,sell,4,12,0\n2018-01-08,AAL,buy,158,6,0\n")
        }
    }

    @Test("CSV import: every bad line told by number and nothing written; a refused trade names its line; a good file round-trips")
    func importTrades() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            #expect(try await client.send(.post, "/api/admin/prices", body: Self.splitAndDividend, contentType: "text/csv", token: admin).status == .ok)
            let token = try await client.register("importer").token
            func create(_ name: String) async throws -> Int {
                let created = try await client.send(.post, "/api/portfolios",
                    body: #"{"name":"\#(name)","startingCash":"1000","startedAt":"2018-01-04"}"#, token: token)
                return try JSONDecoder().decode(PortfolioSummaryBody.self, from: Data(buffer: created.body)).id
            }
            let id = try await create("Broker")
            func upload(_ csv: String, to portfolio: Int? = nil) async throws -> TestResponse {
                try await client.send(.post, "/api/portfolios/\(portfolio ?? id)/import", body: csv, contentType: "text/csv", token: token)
            }
            func cash(_ portfolio: Int) async throws -> String {
                try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: token).cash
            }
            struct LineProblem: Decodable { let code: String; let line: Int?; let detail: String }

            // Lines 3 and 5 are wrong (a side, a fraction of a share), line 6 goes back in time, line 7 names
            // no instrument: all told, nothing written.
            let bad = "date,symbol,side,quantity,price,fee\n2018-01-04,AAL,buy,10,10.5,1\n2018-01-05,AAL,hold,4,12,1\n"
                + "2018-01-05,AAL,sell,1,12,0\n2018-01-08,AAL,buy,1.5,6,0\n2018-01-04,AAL,buy,1,10,0\n2018-01-09,NOPE,buy,1,6,0\n"
            let refused = try await upload(bad)
            let problem = try JSONDecoder().decode(LineProblem.self, from: Data(buffer: refused.body))
            #expect(refused.status == .unprocessableContent && problem.code == "validation_failed" && problem.line == 3)
            #expect(problem.detail.hasPrefix("Line 3: 4 lines are wrong; nothing was imported."), "\(problem.detail)")
            #expect(problem.detail.contains("Line 3: side") && problem.detail.contains("Line 5: quantity") && problem.detail.contains("Line 6: 2018-01-04")
                && problem.detail.contains("Line 7: no instrument has the symbol NOPE."), "\(problem.detail)")
            for (csv, line, code) in [("date,symbol,side,quantity\n", 1, "validation_failed"),
                                      ("date,symbol,side,quantity,price\n2018-01-04,NOPE,buy,1,1\n", 2, "validation_failed"),
                                      ("date,symbol,side,quantity,price\n2999-01-04,AAL,buy,1,1\n", 2, "validation_failed"),
                                      // Only 10 are held (20 after the split) when line 3 sells 11.
                                      ("date,symbol,side,quantity,price\n2018-01-04,AAL,buy,10,10\n2018-01-05,AAL,sell,11,12\n", 3, "insufficient_shares"),
                                      ("date,symbol,side,quantity,price\n2018-01-04,AAL,buy,101,10\n", 2, "insufficient_funds")] {
                let response = try await upload(csv)
                let problem = try JSONDecoder().decode(LineProblem.self, from: Data(buffer: response.body))
                #expect(response.status == .unprocessableContent && problem.code == code && problem.line == line, "\(csv): \(problem.detail)")
            }
            #expect(try await cash(id) == "1000.00")
            #expect(String(buffer: try await client.get("/api/portfolios/\(id)/export", token: token).body) == "date,symbol,side,quantity,price,fee\n")

            // A good file: its own prices and fees, the split and dividends since, any column order, fee optional.
            let good = "symbol,date,side,quantity,price,fee\r\nAAL,2018-01-04,buy,10,10.5,1\r\naal,2018-01-05,SELL,4,12,1\r\nMSFT,2018-01-10,buy,2,90.25,\r\n"
            let imported = try await upload(good)
            #expect(imported.status == .ok && String(buffer: imported.body) == #"{"imported":3}"#, "\(String(buffer: imported.body))")
            #expect(try await cash(id) == "766.50", "1000 − 106 + 20 × 0.50 + 47 − 8 × 0.50 − 180.50")
            let exported = String(buffer: try await client.get("/api/portfolios/\(id)/export", token: token).body)
            #expect(exported == "date,symbol,side,quantity,price,fee\n2018-01-04,AAL,buy,10,10.5,1\n2018-01-05,AAL,sell,4,12,1\n2018-01-10,MSFT,buy,2,90.25,0\n")
            // What one portfolio exports, another imports to the same history.
            let copy = try await create("Copy")
            #expect(try await upload(exported, to: copy).status == .ok)
            #expect(String(buffer: try await client.get("/api/portfolios/\(copy)/export", token: token).body) == exported)
            #expect(try await cash(copy) == "766.50")
            // Not into the personal portfolio, nor anyone else's.
            let personal = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).first { !$0.practice }!.id
            #expect(try await upload(exported, to: personal).status == .unprocessableContent)
            let other = try await client.register("snooper").token
            #expect(try await client.send(.post, "/api/portfolios/\(id)/import", body: exported, contentType: "text/csv", token: other).status == .notFound)

            // A file of one day sent twice at once under one Idempotency-Key (a double click,
            // a retry) trades once; the key with another file is refused.
            let once = try await create("Once")
            func keyed(_ csv: String) async throws -> TestResponse {
                var headers: HTTPFields = [.contentType: "text/csv", .authorization: "Bearer \(token)"]
                headers[HTTPField.Name("Idempotency-Key")!] = "import-1"
                return try await client.execute(uri: "/api/portfolios/\(once)/import", method: .post, headers: headers, body: ByteBuffer(string: csv))
            }
            let day = "date,symbol,side,quantity,price\n2018-01-10,MSFT,buy,2,90\n"
            async let first = keyed(day)
            async let second = keyed(day)
            for response in try await [first, second] {
                #expect(response.status == .ok && String(buffer: response.body) == #"{"imported":1}"#, "\(String(buffer: response.body))")
            }
            #expect(try await cash(once) == "820.00", "1000 − 2 × 90, once")
            let reused = try await keyed("date,symbol,side,quantity,price\n2018-01-10,MSFT,buy,1,90\n")
            #expect(try reused.status == .unprocessableContent && decodeProblem(reused).code == "idempotency_key_reused")
            #expect(try await cash(once) == "820.00")
        }
    }
}
