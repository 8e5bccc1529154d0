import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct TradeResultBody: Decodable, Equatable {
    struct TradeBody: Decodable, Equatable {
        let id: Int
        let portfolioId: Int
        let symbol: String
        let side: String
        let quantity: Int
        let price: String
        let amount: String
        let fee: String
        let createdAt: String
        var note: String?
    }

    struct Position: Decodable, Equatable {
        let symbol: String
        let quantity: Int
    }

    let trade: TradeBody
    let cash: String
    let position: Position
}

struct PortfolioBody: Decodable {
    struct Holding: Decodable {
        let symbol: String
        let name: String
        let quantity: Int
        let price: String
        let value: String
        let averageCost: String
        let unrealizedGain: String
        let dayChange: String
    }

    let id: Int
    let leagueId: Int?
    let cash: String
    let holdingsValue: String
    let netWorth: String
    let holdings: [Holding]
}

struct TradePageBody: Decodable {
    let items: [TradeResultBody.TradeBody]
    let nextBefore: Int?
}

extension TestClientProtocol {
    /// Instruments TENTH (0.10), AAPL (150.00) and ONE (1.00), priced by admin quotes.
    func seedTradingMarket() async throws {
        let admin = try await adminToken()
        let instruments = #"[{"symbol":"TENTH","name":"Tenth Corp"},{"symbol":"AAPL","name":"Apple Inc."},{"symbol":"ONE","name":"One Inc."}]"#
        #expect(try await send(.put, "/api/admin/instruments", body: instruments, token: admin).status == .ok)
        try await setPrice("TENTH", "0.1")
        try await setPrice("AAPL", "150.00")
        try await setPrice("ONE", "1")
    }

    /// Sets an admin quote, as of now or of the moment given, and waits until what follows
    /// it (corporate actions, the orders it crosses) has run.
    func setPrice(_ symbol: String, _ price: String, asOf: Date? = nil) async throws {
        let moment = asOf.map { #","asOf":"\#(ISO8601DateFormatter().string(from: $0))""# } ?? ""
        let response = try await send(.post, "/api/admin/quotes", body: #"[{"symbol":"\#(symbol)","price":"\#(price)"\#(moment)}]"#,
                                      token: try await adminToken())
        #expect(response.status == .ok)
        try await waitForPriceFollowUps()
    }

    /// Waits (up to 30 s) until `/metrics` shows no pass after new prices queued or running.
    func waitForPriceFollowUps() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try await pendingPriceFollowUps() == 0 { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("what follows new prices was still pending after 30 s")
    }

    func pendingPriceFollowUps() async throws -> Int? {
        let metrics = String(buffer: try await execute(uri: "/metrics", method: .get).body)
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("price_followups_pending ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    func trade(_ side: String, _ body: String, token: String, key: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(token)"]
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        return try await execute(uri: "/api/stock/\(side)", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    func tradeOK(_ side: String, _ symbol: String, _ amount: Int, token: String, portfolioID: Int? = nil) async throws -> TradeResultBody {
        let portfolio = portfolioID.map { #","portfolioId":\#($0)"# } ?? ""
        let response = try await trade(side, #"{"symbol":"\#(symbol)","amount":\#(amount)\#(portfolio)}"#, token: token)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(TradeResultBody.self, from: Data(buffer: response.body))
    }
}

@Suite("Trading")
struct TradingTests {
    @Test("the SQL rules of a position's cost and of buying power, by hand: what a sale, a cover or a split keeps; cash less reservations")
    func positionRules() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let rows = try await pool.query(
                """
                SELECT cost_basis_kept(100, 3, 1), cost_basis_kept(100, 3, 0), cost_basis_kept(-100, -3, -2),
                       cost_basis_kept(100.5, 2.5, 2), buying_power(1000, 250.5)
                """
            ).decode((Decimal, Decimal, Decimal, Decimal, Decimal).self)
            await pool.close()
            let (third, none, shortKept, split, power) = try #require(rows.first)
            #expect(third == Decimal(string: "33.3333333333"), "1 of 3 shares that cost 100")
            #expect(none == 0, "nothing is kept of a position sold whole")
            #expect(shortKept == Decimal(string: "-66.6666666667"), "2 of 3 shares short, sold for 100")
            #expect(split == Decimal(string: "80.4"), "a 2.5-for-1 split of 1 share keeps 2 whole shares")
            #expect(power == Decimal(string: "749.5"))
        }
    }

    @Test("buying and selling is exact: 3 × 0.1 costs 0.30; selling everything removes the holding")
    func buyAndSell() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("trader").token
            let bought = try await client.tradeOK("buy", "tenth", 3, token: token)
            #expect(bought.trade.amount == "0.30")
            #expect(bought.trade.price == "0.10")
            #expect(bought.trade.side == "buy")
            #expect(bought.trade.fee == "0.00")
            #expect(bought.cash == "9999.70")
            #expect(bought.position == .init(symbol: "TENTH", quantity: 3))

            var portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            #expect(portfolio.holdings.map(\.symbol) == ["TENTH"])
            // The first trade earns its achievement's reward after the trade's own answer.
            #expect(portfolio.netWorth == "10100.00")
            #expect(portfolio.cash == "10099.70")
            #expect(portfolio.holdingsValue == "0.30")

            let sold = try await client.tradeOK("sell", "TENTH", 3, token: token)
            #expect(sold.cash == "10100.00")
            #expect(sold.position.quantity == 0)
            portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            #expect(portfolio.holdings.isEmpty)
            #expect(portfolio.cash == "10100.00")
            let history = try await client.decode(TradePageBody.self, "/api/transactions", token: token)
            #expect(history.items.map(\.side) == ["sell", "buy"])
        }
    }

    @Test("the benchmark's pgbench text of the trade statements trades like the server")
    func pgbenchText() async throws {
        try await TemporaryDatabase.with { database in
            let userID = try await TestApp.run(on: database) { client in
                let admin = try await client.adminToken()
                let instrument = #"[{"symbol":"S1","name":"Stock 1"}]"#
                #expect(try await client.send(.put, "/api/admin/instruments", body: instrument, token: admin).status == .ok)
                return try await client.register("pgbencher").user.id
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            func run(_ side: TradeSide, quantity: Int) async throws -> String {
                let text = TradeStatement.pgbenchText(side, price: Decimal(string: "100.00")!)
                    .replacingOccurrences(of: ":uid", with: String(userID))
                    .replacingOccurrences(of: ":qty", with: String(quantity))
                    .replacingOccurrences(of: ":sym", with: "1")
                return try await pool.query(PostgresQuery(unsafeSQL: text))[0].decode(String.self, column: 0)
            }
            #expect(try await run(.buy, quantity: 3) == "ok")
            #expect(try await run(.sell, quantity: 1) == "ok")
            #expect(try await run(.sell, quantity: 5) == "insufficient_shares")
            let (cash, held) = try #require(try await pool.query(
                """
                SELECT p.cash, h.quantity FROM portfolios p JOIN holdings h ON h.portfolio_id = p.id
                WHERE p.user_id = \(userID) AND h.symbol = 'S1'
                """
            ).decode((Decimal, Int).self).first)
            // Starting cash, 3 bought and 1 sold at 100.00, and the first trade's reward.
            #expect(cash == Decimal(10_000 - 300 + 100 + 100))
            #expect(held == 2)
            await pool.close()
        }
    }

    @Test("average cost, unrealized gain and day change follow the average-cost method")
    func averageCost() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("averager").token
            // Yesterday's last quote becomes today's previous close.
            try await client.setPrice("AAPL", "100", asOf: Date().addingTimeInterval(-86_400))
            _ = try await client.tradeOK("buy", "AAPL", 2, token: token)
            try await client.setPrice("AAPL", "110")
            _ = try await client.tradeOK("buy", "AAPL", 2, token: token)
            _ = try await client.tradeOK("sell", "AAPL", 1, token: token)
            let holding = try #require(try await client.decode(PortfolioBody.self, "/api/portfolio", token: token).holdings.first)
            #expect(holding.quantity == 3)
            #expect(holding.averageCost == "105.00")
            #expect(holding.value == "330.00")
            #expect(holding.unrealizedGain == "15.00")
            #expect(holding.dayChange == "30.00")
        }
    }

    @Test("bad orders are refused with the right code and change nothing", arguments: [
        (#"{"symbol":"AAPL","amount":0}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","amount":-1}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","amount":1.5}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","amount":"abc"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","amount":1000000001}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL"}"#, 422, "validation_failed"),
        (#"{"symbol":"NOPE","amount":1}"#, 404, "unknown_symbol"),
        (#"{"symbol":"AAPL","amount":1000}"#, 422, "insufficient_funds"),
        (#"{"symbol":"AAPL","amount":1,"portfolioId":999999}"#, 404, "not_found"),
        ("", 400, "bad_request"),
        ("{oops", 400, "bad_request"),
    ])
    func badOrders(_ order: (body: String, status: Int, code: String)) async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("careful").token
            let response = try await client.trade("buy", order.body, token: token)
            #expect(response.status.code == order.status)
            #expect(try decodeProblem(response).code == order.code)
            let sell = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
            #expect(try decodeProblem(sell).code == "insufficient_shares")
            let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            #expect(portfolio.cash == "10000.00" && portfolio.holdings.isEmpty)
            #expect(try await client.decode(TradePageBody.self, "/api/transactions", token: token).items.isEmpty)
        }
    }

    @Test("someone else's portfolio is 404 for reading and trading")
    func othersPortfolio() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let alice = try await client.register("alice_t").token
            let bob = try await client.register("bob_t").token
            let bobs = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: bob)[0].id
            #expect(try await client.get("/api/portfolio?portfolioId=\(bobs)", token: alice).status == .notFound)
            #expect(try await client.get("/api/transactions?portfolioId=\(bobs)", token: alice).status == .notFound)
            let trade = try await client.trade("buy", #"{"symbol":"ONE","amount":1,"portfolioId":\#(bobs)}"#, token: alice)
            #expect(trade.status == .notFound)
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: bob).cash == "10000.00")
        }
    }

    @Test("100 concurrent sells of a single share: exactly one succeeds")
    func concurrentSells() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("seller").token
            _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await client.trade("sell", #"{"symbol":"ONE","amount":1}"#, token: token).status.code }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 422 }.count == 99)
            let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            #expect(portfolio.cash == "10100.00")  // with the first-trade reward
        }
    }

    @Test("100 concurrent buys beyond the cash: cash never negative, and cash + cost of the buys = starting cash")
    func concurrentBuys() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("spender").token
            // 100 × 7 shares × 150.00 = 105,000, far beyond 10,000.
            let results = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await client.trade("buy", #"{"symbol":"AAPL","amount":7}"#, token: token) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let succeeded = results.filter { $0.status == .ok }
            #expect(succeeded.count == 9)
            #expect(results.filter { $0.status == .unprocessableContent }.allSatisfy { (try? decodeProblem($0).code) == "insufficient_funds" })
            let spent = try succeeded.map { try JSONDecoder().decode(TradeResultBody.self, from: Data(buffer: $0.body)).trade.amount }
                .reduce(Decimal(0)) { $0 + Decimal(string: $1)! }
            let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            let cash = Decimal(string: portfolio.cash)!
            #expect(cash >= 0)
            #expect(cash + spent == 10100)  // the starting cash and the first-trade reward
            #expect(portfolio.holdings.first?.quantity == 63)
        }
    }

    @Test("an Idempotency-Key replays the first answer; another body with the same key is 422")
    func idempotentReplay() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("retrier").token
            let body = #"{"symbol":"ONE","amount":2}"#
            let first = try await client.trade("buy", body, token: token, key: "order-1")
            let second = try await client.trade("buy", body, token: token, key: "order-1")
            #expect(first.status == .ok && second.status == .ok)
            #expect(String(buffer: first.body) == String(buffer: second.body))
            let reused = try await client.trade("buy", #"{"symbol":"ONE","amount":3}"#, token: token, key: "order-1")
            #expect(reused.status == .unprocessableContent)
            #expect(try decodeProblem(reused).code == "idempotency_key_reused")
            // A failure is an answer too: it is replayed even once cash would allow the trade.
            let refused = try await client.trade("buy", #"{"symbol":"AAPL","amount":1000}"#, token: token, key: "order-2")
            #expect(try decodeProblem(refused).code == "insufficient_funds")
            let again = try await client.trade("buy", #"{"symbol":"AAPL","amount":1000}"#, token: token, key: "order-2")
            #expect(try decodeProblem(again).code == "insufficient_funds")
            #expect(try await client.get("/api/stock/buy", token: token).status != .ok)
            #expect(try await client.decode(TradePageBody.self, "/api/transactions", token: token).items.count == 1)
            let longKey = String(repeating: "k", count: 256)
            #expect(try await client.trade("buy", body, token: token, key: longKey).status == .unprocessableContent)
        }
    }

    @Test("50 concurrent requests with one Idempotency-Key: one trade, 50 identical answers")
    func idempotentConcurrent() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("hammer").token
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await client.trade("buy", #"{"symbol":"ONE","amount":1}"#, token: token, key: "same-key")
                        return "\(response.status.code) \(String(buffer: response.body))"
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(answers).count == 1)
            #expect(answers[0].hasPrefix("200 "))
            #expect(try await client.decode(TradePageBody.self, "/api/transactions", token: token).items.count == 1)
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: token).cash == "10099.00")
        }
    }

    @Test("history pages by cursor stay stable while new trades arrive; CSV has every trade")
    func historyPagination() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("historian").token
            for _ in 0..<25 { _ = try await client.tradeOK("buy", "ONE", 1, token: token) }
            var seen: [Int] = []
            var cursor: Int? = nil
            repeat {
                let page = try await client.decode(TradePageBody.self, "/api/transactions?limit=10" + (cursor.map { "&before=\($0)" } ?? ""), token: token)
                seen += page.items.map(\.id)
                cursor = page.nextBefore
                _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            } while cursor != nil
            #expect(seen.count == 25)
            #expect(seen == seen.sorted(by: >))
            #expect(Set(seen).count == 25)

            let filtered = try await client.decode(TradePageBody.self, "/api/transactions?symbol=aapl", token: token)
            #expect(filtered.items.isEmpty && filtered.nextBefore == nil)
            for bad in ["limit=0", "before=x", "portfolioId=-3"] {
                #expect(try await client.get("/api/transactions?\(bad)", token: token).status == .unprocessableContent)
            }

            let csv = String(buffer: try await client.get("/api/transactions.csv", token: token).body)
            let lines = csv.split(separator: "\n")
            #expect(lines.first == "id,portfolioId,symbol,side,quantity,price,amount,fee,createdAt")
            #expect(lines.count == 1 + 28)
            var headers: HTTPFields = [.authorization: "Bearer \(token)", .accept: "text/csv"]
            headers[.accept] = "text/csv"
            let negotiated = try await client.execute(uri: "/api/transactions", method: .get, headers: headers)
            #expect(negotiated.headers[.contentType]?.hasPrefix("text/csv") == true)
            #expect(String(buffer: negotiated.body) == csv)
        }
    }

    @Test("cash movements show the starting cash; the portfolio list values each portfolio")
    func cashMovementsAndPortfolios() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("saver").token
            _ = try await client.tradeOK("buy", "AAPL", 2, token: token)
            try await client.setPrice("AAPL", "160")
            let movements = try await client.decode(CashMovementPageBody.self, "/api/cash-movements", token: token)
            #expect(movements.items.map(\.kind) == ["reward", "starting_cash"])
            #expect(movements.items.map(\.amount) == ["100.00", "10000.00"])
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
            #expect(portfolios.count == 1)
            #expect(portfolios[0].leagueId == nil)
            #expect(portfolios[0].cash == "9800.00")
            #expect(portfolios[0].netWorth == "10120.00")
        }
    }
}

struct PortfolioSummaryBody: Decodable, Equatable {
    let id: Int
    let leagueId: Int?
    let name: String
    let cash: String
    let netWorth: String
    var kind = "personal"
    var practice = false
    var baseCurrency = "USD"
}

struct CashMovementPageBody: Decodable {
    struct Item: Decodable {
        let id: Int
        let portfolioId: Int
        let kind: String
        let amount: String
        let note: String
        let createdAt: String
    }

    let items: [Item]
    let nextBefore: Int?
}
