import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

extension TestClientProtocol {
    /// A new API key of the token's user (for their personal portfolio unless told).
    func apiKey(token: String, portfolioID: Int? = nil) async throws -> (keyID: String, secret: String) {
        let body = portfolioID.map { #"{"portfolioId":\#($0)}"# } ?? "{}"
        let response = try await post("/api/api-keys", json: body, token: token)
        #expect(response.status == .created)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        return (try #require(object["keyId"] as? String), try #require(object["secret"] as? String))
    }

    /// A `/v2` request with an API key's headers.
    func alpaca(_ method: HTTPRequest.Method, _ uri: String, key: (keyID: String, secret: String), body: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        headers[BotAuthMiddleware.keyIDHeader] = key.keyID
        headers[BotAuthMiddleware.secretHeader] = key.secret
        return try await execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
    }
}

/// An Alpaca error body.
struct AlpacaErrorBody: Decodable {
    let code: Int
    let message: String
}

@Suite("Bots: API keys and the Alpaca-compatible API")
struct BotTests {
    @Test("a key's requests share one budget a minute across server processes: past it, 429 with Retry-After in Alpaca's shape")
    func rateLimitIsShared() async throws {
        try await TemporaryDatabase.with { database in
            let limited: @Sendable (inout AppConfiguration) -> Void = { $0.botRequestsPerMinute = 5 }
            try await TestApp.run(on: database, configure: limited) { a in
                try await TestApp.run(on: database, configure: limited) { b in
                    let token = try await a.register("busy_bot").token
                    let key = try await a.apiKey(token: token)
                    for client in [a, b, a, b, a] {
                        #expect(try await client.alpaca(.get, "/v2/account", key: key).status == .ok)
                    }
                    let refused = try await b.alpaca(.get, "/v2/clock", key: key)
                    #expect(refused.status == .tooManyRequests)
                    #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 >= 1)
                    let body = try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: refused.body))
                    #expect(body.code == 42_910_000)
                    // Another key of the same user has its own budget.
                    #expect(try await a.alpaca(.get, "/v2/clock", key: try await a.apiKey(token: token)).status == .ok)
                }
            }
        }
    }

    @Test("a key's budget is spent in leases across processes: never more than the limit in a window, and short of it by at most a lease held by the other process")
    func rateLimitLeases() async throws {
        try await TemporaryDatabase.with { database in
            let limited: @Sendable (inout AppConfiguration) -> Void = { $0.botRequestsPerMinute = 60 }  // leases of 3
            try await TestApp.run(on: database, configure: limited) { a in
                try await TestApp.run(on: database, configure: limited) { b in
                    let token = try await a.register("leasing_bot").token
                    let key = try await a.apiKey(token: token)
                    var statuses: [HTTPResponse.Status] = []
                    for index in 0..<70 {
                        statuses.append(try await (index % 2 == 0 ? a : b).alpaca(.get, "/v2/clock", key: key).status)
                    }
                    let served = statuses.filter { $0 == .ok }.count
                    #expect((57...60).contains(served) && statuses.suffix(5).allSatisfy { $0 == .tooManyRequests }, "\(served) served: \(statuses)")
                    // A lease is written once per three requests, not once per request.
                    let pool = PostgresConnectionPool(configuration: database.configuration)
                    let counted = try await pool.query("SELECT hits, granted FROM throttle_windows WHERE key = \("bot:" + key.keyID)")
                        .decode((Int, Int).self)
                    await pool.close()
                    #expect(counted.first?.0 == 60 && counted.first?.1 == 0, "\(counted)")
                }
            }
        }
    }

    @Test("/v2/account's totals are the portfolio's valuation: equity its net worth, long and short market values its positions', last equity before the day's change")
    func accountTotals() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let token = try await client.register("totals_bot").token
                let (_, portfolio) = try await client.leagueWithRules(#"{"allowShortSelling":true}"#, token: token)
                let key = try await client.apiKey(token: token, portfolioID: portfolio)
                for order in [#""symbol":"AAPL","qty":"3","side":"buy""#, #""symbol":"TENTH","qty":"100","side":"buy""#,
                              #""symbol":"ONE","qty":"7","side":"sell""#] {
                    let placed = try await client.alpaca(.post, "/v2/orders", key: key, body: "{\(order),\"type\":\"market\",\"time_in_force\":\"day\"}")
                    #expect(placed.status == .ok, "\(String(buffer: placed.body))")
                }
                // A previous close for AAPL, written by hand: 3 shares up 10.00 since.
                let pool = PostgresConnectionPool(configuration: database.configuration)
                try await pool.execute("UPDATE quotes SET previous_close = 140 WHERE symbol = 'AAPL'")
                await pool.close()
                let account = try JSONSerialization.jsonObject(with: Data(buffer: try await client.alpaca(.get, "/v2/account", key: key).body))
                    as? [String: Any] ?? [:]
                let valued = try JSONDecoder().decode(
                    PortfolioBody.self, from: Data(buffer: try await client.get("/api/portfolio?portfolioId=\(portfolio)", token: token).body)
                )
                let values = valued.holdings.map { Decimal(string: $0.value)! }
                let dayChange = valued.holdings.map { Decimal(string: $0.dayChange)! }.reduce(0, +)
                #expect(dayChange == 30)
                #expect(account["equity"] as? String == valued.netWorth && account["portfolio_value"] as? String == valued.netWorth)
                #expect(account["cash"] as? String == valued.cash)
                #expect(account["long_market_value"] as? String == values.filter { $0 > 0 }.reduce(0, +).moneyString)
                #expect(account["short_market_value"] as? String == "-7.00")
                #expect(account["last_equity"] as? String == (Decimal(string: valued.netWorth)! - dayChange).moneyString, "\(account)")
            }
        }
    }

    @Test("a key revoked on one process stops working there at once and on another within 2 s")
    func revocationAcrossProcesses() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { a in
                try await TestApp.run(on: database) { b in
                    let token = try await a.register("revoker").token
                    let key = try await a.apiKey(token: token)
                    #expect(try await b.alpaca(.get, "/v2/account", key: key).status == .ok)
                    #expect(try await a.send(.delete, "/api/api-keys/\(key.keyID)", body: "", token: token).status == .noContent)
                    #expect(try await a.alpaca(.get, "/v2/account", key: key).status == .unauthorized)
                    try await Task.sleep(for: .milliseconds(2100))
                    #expect(try await b.alpaca(.get, "/v2/account", key: key).status == .unauthorized)
                }
            }
        }
    }

    @Test("keys: at most ten a user; names are checked; a malformed key id is 404 and a missing secret 401")
    func keyRules() async throws {
        try await TestApp.run { client in
            let token = try await client.register("collector").token
            for _ in 0..<10 { _ = try await client.apiKey(token: token) }
            let eleventh = try await client.post("/api/api-keys", json: "{}", token: token)
            #expect(eleventh.status == .conflict)
            #expect(try await client.post("/api/api-keys", json: #"{"name":"bell\u0007"}"#, token: try await client.register("namer").token).status == .unprocessableContent)
            #expect(try await client.send(.delete, "/api/api-keys/not-a-key", body: "", token: token).status == .notFound)
            var headers: HTTPFields = [:]
            headers[BotAuthMiddleware.keyIDHeader] = "PKAAAAAAAAAAAAAAAAAA"
            let missing = try await client.execute(uri: "/v2/account", method: .get, headers: headers, body: nil)
            #expect(missing.status == .unauthorized)
            #expect(try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: missing.body)).code == 40_110_000)
            // A wrong secret is no use of the key; the right one is.
            let user = try await client.register("user_of_keys").token
            let key = try await client.apiKey(token: user)
            let wrong = String(key.secret.dropLast()) + (key.secret.hasSuffix("x") ? "y" : "x")
            #expect(try await client.alpaca(.get, "/v2/clock", key: (key.keyID, wrong)).status == .unauthorized)
            func lastUsed() async throws -> Any? {
                let keys = try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/api-keys", token: user).body)) as? [[String: Any]]
                return keys?.first?["lastUsedAt"]
            }
            #expect(try await lastUsed() is NSNull)
            #expect(try await client.alpaca(.get, "/v2/clock", key: key).status == .ok)
            #expect(try await lastUsed() is String)
            // Without any credentials: 401 in Alpaca's shape too.
            let anonymous = try await client.execute(uri: "/v2/account", method: .get, headers: [:], body: nil)
            #expect(anonymous.status == .unauthorized)
            #expect(try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: anonymous.body)).code == 40_110_000)
            // Alpaca's field order, the same bytes every time.
            #expect(String(buffer: anonymous.body).hasPrefix(#"{"code":40110000,"message":"#), "\(String(buffer: anonymous.body))")
        }
    }

    @Test("a bearer token works on /v2 for the personal portfolio; an unsupported parameter is refused, not ignored")
    func bearerAndParameters() async throws {
        try await TestApp.run { client in
            let token = try await client.register("human_bot").token
            #expect(try await client.get("/v2/account", token: token).status == .ok)
            let refused = try await client.get("/v2/assets?attributes=ptp_no_exception", token: token)
            #expect(refused.status == .unprocessableContent)
            let body = try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: refused.body))
            #expect(body.code == 40_010_001 && body.message.contains("attributes"))
        }
    }

    @Test("every order, a plain market trade included, has one UUID that /v2 finds it by; another user's is not found")
    func orderUUIDs() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("uuid_trader").token
            _ = try await client.tradeOK("buy", "AAPL", 2, token: token)
            func listed() async throws -> [[String: Any]] {
                let body = try await client.get("/api/orders?status=all", token: token).body
                return try #require((try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["items"] as? [[String: Any]])
            }
            let uuid = try #require(try await listed().first?["uuid"] as? String)
            #expect(UUID(uuidString: uuid) != nil)
            #expect(try await listed().first?["uuid"] as? String == uuid, "the same on every read")
            let found = try await client.get("/v2/orders/\(uuid)", token: token)
            #expect(found.status == .ok)
            let order = try #require(try JSONSerialization.jsonObject(with: Data(buffer: found.body)) as? [String: Any])
            #expect(order["id"] as? String == uuid && order["status"] as? String == "filled" && order["filled_qty"] as? String == "2")
            #expect(try await client.get("/v2/orders/\(uuid)", token: try await client.register("stranger").token).status == .notFound)
        }
    }
}
