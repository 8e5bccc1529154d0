import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct BotBody: Decodable {
    struct Portfolio: Decodable, Equatable {
        let id: Int
        let leagueId: Int?
        let kind: String
    }

    let id: Int
    let username: String
    let ownerId: Int
    let createdAt: String
    let portfolios: [Portfolio]
}

struct BotStandingBody: Decodable {
    let rank: Int
    let username: String
    let bot: Bool
    let ownerUsername: String?
}

struct BotStandingPageBody: Decodable {
    let items: [BotStandingBody]
    let total: Int
}

extension TestClientProtocol {
    func createBot(_ name: String, token: String) async throws -> BotBody {
        let response = try await send(.post, "/api/bots", body: #"{"name":"\#(name)"}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(BotBody.self, from: Data(buffer: response.body))
    }

    /// A key of one of the caller's bots (its personal portfolio unless told).
    func botKey(token: String, botID: Int, portfolioID: Int? = nil) async throws -> (keyID: String, secret: String) {
        let portfolio = portfolioID.map { #","portfolioId":\#($0)"# } ?? ""
        let response = try await post("/api/api-keys", json: #"{"botId":\#(botID)\#(portfolio)}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        #expect(object["botId"] as? Int == botID)
        return (try #require(object["keyId"] as? String), try #require(object["secret"] as? String))
    }

    /// A market buy through `/v2` with a key; the response's status.
    func alpacaBuy(_ symbol: String, _ quantity: Int, key: (keyID: String, secret: String)) async throws -> TestResponse {
        try await alpaca(.post, "/v2/orders", key: key, body: #"{"symbol":"\#(symbol)","qty":"\#(quantity)","side":"buy","type":"market","time_in_force":"day"}"#)
    }

    func problemCode(_ response: TestResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])?["code"] as? String
    }
}

@Suite("Bot players")
struct BotPlayerTests {
    @Test("a player's bots: created with a funded personal portfolio, listed only to their owner, at most five, never logging in")
    func createListLimit() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("bot_owner")
            let bot = try await client.createBot("owner_bot_1", token: owner.token)
            #expect(bot.username == "owner_bot_1" && bot.ownerId == owner.user.id)
            #expect(bot.portfolios.count == 1 && bot.portfolios[0].leagueId == nil && bot.portfolios[0].kind == "personal")

            // The same rules as any username: taken in any case, or malformed.
            let taken = try await client.send(.post, "/api/bots", body: #"{"name":"BOT_OWNER"}"#, token: owner.token)
            #expect(taken.status == .conflict)
            let malformed = try await client.send(.post, "/api/bots", body: #"{"name":"no spaces"}"#, token: owner.token)
            #expect(malformed.status == .unprocessableContent)

            for index in 2...5 { _ = try await client.createBot("owner_bot_\(index)", token: owner.token) }
            let sixth = try await client.send(.post, "/api/bots", body: #"{"name":"owner_bot_6"}"#, token: owner.token)
            #expect(sixth.status == .conflict && client.problemCode(sixth) == "too_many_bots")
            let listed = try await client.decode([BotBody].self, "/api/bots", token: owner.token)
            #expect(listed.map(\.username) == (1...5).map { "owner_bot_\($0)" })

            let stranger = try await client.register("bot_stranger")
            #expect(try await client.decode([BotBody].self, "/api/bots", token: stranger.token).isEmpty)
            #expect(try await client.delete("/api/bots/\(bot.id)", token: stranger.token).status == .notFound)
            // A bot has no password: no password logs it in.
            for password in ["", "correct horse"] {
                let login = try await client.post("/api/auth/login", json: #"{"username":"owner_bot_1","password":"\#(password)"}"#)
                #expect(login.status == .unauthorized || login.status == .unprocessableContent)
            }
            // Deleting one makes room for another.
            #expect(try await client.delete("/api/bots/\(bot.id)", token: owner.token).status == .noContent)
            _ = try await client.createBot("owner_bot_6", token: owner.token)
        }
    }

    @Test("a bot's key trades the bot's own portfolio, not its owner's; deleting the bot revokes the key and leaves its seat")
    func botKeysTradeTheBotsPortfolio() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let owner = try await client.register("key_owner")
            let bot = try await client.createBot("key_bot", token: owner.token)
            let key = try await client.botKey(token: owner.token, botID: bot.id)
            #expect(try await client.alpacaBuy("AAPL", 2, key: key).status == .ok)
            func positions(_ response: TestResponse) throws -> [String] {
                try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]])
                    .map { "\($0["symbol"] ?? "?") \($0["qty"] ?? "?")" }
            }
            #expect(try positions(try await client.alpaca(.get, "/v2/positions", key: key)) == ["AAPL 2"])
            // The owner's portfolio is untouched.
            #expect(try positions(try await client.get("/v2/positions", token: owner.token)).isEmpty)
            // Listed with the owner's keys, marked with the bot; another player cannot make one for it.
            let keys = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/api-keys", token: owner.token).body)) as? [[String: Any]])
            #expect(keys.map { $0["botId"] as? Int } == [bot.id])
            let stranger = try await client.register("key_stranger")
            #expect(try await client.post("/api/api-keys", json: #"{"botId":\#(bot.id)}"#, token: stranger.token).status == .notFound)

            let league = try await client.createLeague(#"{"name":"Seats","mode":"isolated"}"#, token: owner.token)
            let seated = try await client.send(.post, "/api/leagues/join/\(league.code)", body: #"{"botId":\#(bot.id)}"#, token: owner.token)
            #expect(seated.status == .ok)
            #expect(try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: owner.token).memberCount == 2)
            #expect(try await client.delete("/api/bots/\(bot.id)", token: owner.token).status == .noContent)
            #expect(try await client.alpaca(.get, "/v2/account", key: key).status == .unauthorized)
            #expect(try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: owner.token).memberCount == 1)
            #expect(try await client.decode([BotBody].self, "/api/bots", token: owner.token).isEmpty)
        }
    }

    @Test("a separate league ranks humans and bots apart; forbidding bots stops their keys, old ones included, and their joins")
    func botPolicy() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("policy_host")
            let student = try await client.register("policy_student")
            let league = try await client.createLeague(#"{"name":"Class","mode":"isolated","bots":"separate"}"#, token: host.token)
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let bot = try await client.createBot("student_bot", token: student.token)
            #expect(try await client.send(.post, "/api/leagues/join/\(league.code)", body: #"{"botId":\#(bot.id)}"#, token: student.token).status == .ok)
            let leaguePortfolio = try #require(try await client.decode([BotBody].self, "/api/bots", token: student.token).first?.portfolios.last)
            #expect(leaguePortfolio.leagueId == league.id && leaguePortfolio.kind == "league")
            let key = try await client.botKey(token: student.token, botID: bot.id, portfolioID: leaguePortfolio.id)
            #expect(try await client.alpacaBuy("AAPL", 1, key: key).status == .ok)
            try await client.setPrice("AAPL", "200.00")

            // Humans by default, each kind ranked from 1; everyone on asking.
            let humans = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: host.token)
            #expect(humans.items.map(\.username).sorted() == ["policy_host", "policy_student"] && humans.total == 2)
            #expect(humans.items.allSatisfy { !$0.bot && $0.ownerUsername == nil })
            let bots = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard?players=bots", token: host.token)
            #expect(bots.items.map(\.username) == ["student_bot"] && bots.items.first?.rank == 1 && bots.total == 1)
            #expect(bots.items.first?.bot == true && bots.items.first?.ownerUsername == "policy_student")
            // A page past the end still counts its kind.
            let pastTheEnd = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard?players=bots&offset=5", token: host.token)
            #expect(pastTheEnd.items.isEmpty && pastTheEnd.total == 1)
            let everyone = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard?players=all", token: host.token)
            #expect(everyone.items.first?.username == "student_bot" && everyone.total == 3)
            #expect(try await client.get("/api/leagues/\(league.id)/leaderboard?players=robots", token: host.token).status == .unprocessableContent)

            // Only the owner changes the policy.
            #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"bots":"forbidden"}"#, token: student.token).status == .forbidden)
            let changed = try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"bots":"forbidden"}"#, token: host.token)
            #expect(changed.status == .ok)
            #expect((try JSONSerialization.jsonObject(with: Data(buffer: changed.body)) as? [String: Any])?["bots"] as? String == "forbidden")
            // The key made before: refused within the key cache's lifetime, in Alpaca's shape.
            var refused = try await client.alpacaBuy("AAPL", 1, key: key)
            for _ in 0..<40 where refused.status != .forbidden {
                try await Task.sleep(for: .milliseconds(100))
                refused = try await client.alpacaBuy("AAPL", 1, key: key)
            }
            #expect(refused.status == .forbidden)
            #expect(try JSONDecoder().decode(AlpacaErrorBody.self, from: Data(buffer: refused.body)).code == 40_310_000)
            // Its reads too: the key's lookup finds the league forbidding it.
            var read = try await client.alpaca(.get, "/v2/account", key: key)
            for _ in 0..<40 where read.status != .forbidden {
                try await Task.sleep(for: .milliseconds(100))
                read = try await client.alpaca(.get, "/v2/account", key: key)
            }
            #expect(read.status == .forbidden)
            // No new key on the league's portfolios, the student's own included, and no bot joins.
            let newKey = try await client.post("/api/api-keys", json: #"{"botId":\#(bot.id),"portfolioId":\#(leaguePortfolio.id)}"#, token: student.token)
            #expect(newKey.status == .forbidden && client.problemCode(newKey) == "bots_forbidden")
            let other = try await client.createBot("other_bot", token: student.token)
            let join = try await client.send(.post, "/api/leagues/join/\(league.code)", body: #"{"botId":\#(other.id)}"#, token: student.token)
            #expect(join.status == .forbidden && client.problemCode(join) == "bots_forbidden")
            // The bot's personal portfolio plays in no league: its key there still works.
            #expect(try await client.alpacaBuy("AAPL", 1, key: try await client.botKey(token: student.token, botID: bot.id)).status == .ok)
        }
    }

    @Test("a key's trades stop the moment the host forbids keys: the trade gate reads the policy in the statement, not from the key's cached permission")
    func forbiddingStopsKeyTradesAtOnce() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("gate_key_host")
            let student = try await client.register("gate_key_student")
            let league = try await client.createLeague(#"{"name":"Gate keys","mode":"isolated"}"#, token: host.token)
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let portfolio = try #require(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: student.token)
                .first { $0.leagueId == league.id }?.id)
            let key = try await client.apiKey(token: student.token, portfolioID: portfolio)
            let marketBuy = #"{"symbol":"AAPL","qty":"1","side":"buy","type":"market","time_in_force":"day"}"#
            let limitBuy = #"{"symbol":"AAPL","qty":"1","side":"buy","type":"limit","limit_price":"100","time_in_force":"gtc"}"#
            // The first order reads the key's permission, which is then cached for 2 s.
            #expect(try await client.alpaca(.post, "/v2/orders", key: key, body: marketBuy).status == .ok)
            #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"bots":"forbidden"}"#, token: host.token).status == .ok)
            for body in [marketBuy, limitBuy] {
                let refused = try await client.alpaca(.post, "/v2/orders", key: key, body: body)
                #expect(refused.status == .forbidden, "\(String(buffer: refused.body))")
                #expect(String(buffer: refused.body).contains("forbids bots"), "\(String(buffer: refused.body))")
            }
            let positions = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: student.token)
            #expect(positions.holdings.map(\.quantity) == [1], "only the order before the change filled")
        }
    }

    @Test("forbidding bots cancels the resting orders API keys placed in the league, a bot's or a member's, and not those placed by hand; a key's order placed as the policy changed never fills")
    func forbiddingCancelsKeyOrders() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("cancel_host")
                let student = try await client.register("cancel_student")
                let league = try await client.createLeague(#"{"name":"Keys","mode":"isolated"}"#, token: host.token)
                #expect(try await client.join(league.code, token: student.token).status == .ok)
                let bot = try await client.createBot("cancel_bot", token: student.token)
                #expect(try await client.send(.post, "/api/leagues/join/\(league.code)", body: #"{"botId":\#(bot.id)}"#, token: student.token).status == .ok)
                let botPortfolio = try #require(try await client.decode([BotBody].self, "/api/bots", token: student.token).first?.portfolios.last?.id)
                let studentPortfolio = try #require(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: student.token)
                    .first { $0.leagueId == league.id }?.id)
                let botKey = try await client.botKey(token: student.token, botID: bot.id, portfolioID: botPortfolio)
                let studentKey = try await client.apiKey(token: student.token, portfolioID: studentPortfolio)
                let limitBuy = #"{"symbol":"AAPL","qty":"1","side":"buy","type":"limit","limit_price":"100","time_in_force":"gtc"}"#
                func restingByKey(_ key: (keyID: String, secret: String)) async throws -> String {
                    try await AlpacaStreamTests.order(client, key: key, limitBuy)
                }
                func byHand() async throws -> Int {
                    let response = try await client.post("/api/orders", json: #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","timeInForce":"gtc","portfolioId":\#(studentPortfolio)}"#, token: student.token)
                    #expect(response.status == .created, "\(String(buffer: response.body))")
                    return try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])["id"] as! Int
                }
                func status(_ uuid: String) async throws -> String {
                    try await pool.query("SELECT status FROM orders WHERE uuid = \(uuid)::uuid").decodeColumn(String.self)[0]
                }
                func status(_ id: Int) async throws -> String {
                    try await pool.query("SELECT status FROM orders WHERE id = \(id)").decodeColumn(String.self)[0]
                }

                // The owner's change cancels the keys' orders at once.
                let (botOrder, studentKeyOrder, handOrder) = (try await restingByKey(botKey), try await restingByKey(studentKey), try await byHand())
                #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"bots":"forbidden"}"#, token: host.token).status == .ok)
                #expect(try await status(botOrder) == "canceled")
                #expect(try await status(studentKeyOrder) == "canceled")
                #expect(try await status(handOrder) == "new")
                let reason = try await pool.query("SELECT reject_reason FROM orders WHERE uuid = \(botOrder)::uuid").decodeColumn(String.self)
                #expect(reason == [OrderStore.botsForbiddenReason])
                // Their reservations are released: the student's buying power holds back only the hand-placed order.
                let reserved = try await pool.query(
                    """
                    SELECT p.reserved_cash, coalesce((SELECT sum(o.reserved_cash) FROM orders o WHERE o.portfolio_id = p.id AND o.status = 'new'), 0)
                    FROM portfolios p WHERE p.id IN (\(botPortfolio), \(studentPortfolio)) ORDER BY p.id = \(botPortfolio) DESC
                    """
                ).decode((Decimal, Decimal).self)
                #expect(reserved[0].0 == 0 && reserved[1].0 > 0 && reserved[1].0 == reserved[1].1)

                // An order a key placed in the moment before its cached permission expired:
                // the matcher does not fill it, and the sweep cancels it.
                #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"bots":"allowed"}"#, token: host.token).status == .ok)
                var late = try await client.alpaca(.post, "/v2/orders", key: botKey, body: limitBuy)
                for _ in 0..<40 where late.status != .ok {
                    try await Task.sleep(for: .milliseconds(100))
                    late = try await client.alpaca(.post, "/v2/orders", key: botKey, body: limitBuy)
                }
                let lateOrder = try #require(try JSONSerialization.jsonObject(with: Data(buffer: late.body)) as? [String: Any])["id"] as! String
                try await pool.execute("UPDATE leagues SET bots = 'forbidden' WHERE id = \(league.id)")
                try await client.setPrice("AAPL", "99.00")
                for _ in 0..<50 where try await status(handOrder) != "filled" { try await Task.sleep(for: .milliseconds(100)) }
                #expect(try await status(handOrder) == "filled")
                #expect(try await status(lateOrder) == "new")
                #expect(try await OrderStore(pool: pool).close(.placedByForbiddenKeys(leagueID: nil), as: .canceled, reason: OrderStore.botsForbiddenReason).count == 1)
                #expect(try await status(lateOrder) == "canceled")
                let botTrades = try await pool.query("SELECT count(*) FROM trades WHERE portfolio_id = \(botPortfolio)").decodeColumn(Int.self)
                #expect(botTrades == [0])
            }
            await pool.close()
        }
    }

    @Test("a shared league that forbids bots stops API keys on its members' personal portfolios")
    func sharedLeagueForbidsPersonalKeys() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("shared_host")
            let member = try await client.register("shared_member")
            let key = try await client.apiKey(token: member.token)
            #expect(try await client.alpacaBuy("AAPL", 1, key: key).status == .ok)
            let league = try await client.createLeague(#"{"name":"No bots","bots":"forbidden"}"#, token: host.token)
            #expect(try await client.join(league.code, token: member.token).status == .ok)
            var refused = try await client.alpacaBuy("AAPL", 1, key: key)
            for _ in 0..<40 where refused.status != .forbidden {
                try await Task.sleep(for: .milliseconds(100))
                refused = try await client.alpacaBuy("AAPL", 1, key: key)
            }
            #expect(refused.status == .forbidden)
            // Leaving the league frees the portfolio again.
            #expect(try await client.delete("/api/leagues/leave/\(league.id)", token: member.token).status == .noContent)
            var allowed = try await client.alpacaBuy("AAPL", 1, key: key)
            for _ in 0..<40 where allowed.status != .ok {
                try await Task.sleep(for: .milliseconds(100))
                allowed = try await client.alpacaBuy("AAPL", 1, key: key)
            }
            #expect(allowed.status == .ok)
        }
    }

    @Test("a big league's snapshot ranks bots apart too")
    func snapshotRanksByKind() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 2, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: StandingsTests.quietService(liveLimit: 2)) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("snap_host")
                let league = try await client.createLeague(#"{"name":"Snap","bots":"separate"}"#, token: host.token)
                for name in ["snap_bot_a", "snap_bot_b"] {
                    let bot = try await client.createBot(name, token: host.token)
                    #expect(try await client.send(.post, "/api/leagues/join/\(league.code)", body: #"{"botId":\#(bot.id)}"#, token: host.token).status == .ok)
                    if name == "snap_bot_b" { #expect(try await client.alpacaBuy("AAPL", 1, key: try await client.botKey(token: host.token, botID: bot.id)).status == .ok) }
                }
                try await client.setPrice("AAPL", "300.00")
                #expect(try await store.refreshSnapshots(maxAge: .zero) == [league.id])
                let bots = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard?players=bots", token: host.token)
                #expect(bots.items.map(\.username) == ["snap_bot_b", "snap_bot_a"] && bots.items.map(\.rank) == [1, 2] && bots.total == 2)
                let second = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard?players=bots&offset=1", token: host.token)
                #expect(second.items.map(\.username) == ["snap_bot_a"])
                let humans = try await client.decode(BotStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: host.token)
                #expect(humans.items.map(\.username) == ["snap_host"] && humans.items.first?.rank == 1 && humans.total == 1)
            }
            await pool.close()
        }
    }
}
