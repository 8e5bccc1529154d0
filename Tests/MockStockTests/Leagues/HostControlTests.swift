import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

/// What a host sees of a league they run: whether they play, whether trading is frozen,
/// how many resets members may make.
struct HostedLeagueBody: Decodable {
    let id: Int
    let code: String
    let memberCount: Int
    let ownerPlays: Bool
    let frozen: Bool
    let frozenReason: String?
    let resetsAllowed: Int
    let members: [HostedStandingBody]?
}

struct HostedStandingBody: Decodable {
    let userId: Int
    let username: String
    let netWorth: String
    let resets: Int
}

struct ResetBody: Decodable {
    let userId: Int
    let portfolioId: Int
    let previousPortfolioId: Int?
    let resets: Int
}

extension TestClientProtocol {
    /// An isolated league of `owner`'s (with `fields` added to the body).
    func hostedLeague(_ fields: String, token: String) async throws -> HostedLeagueBody {
        let response = try await send(.post, "/api/leagues/create",
                                      body: #"{"name":"Class 7b","mode":"isolated","startingCash":"10000"\#(fields)}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(HostedLeagueBody.self, from: Data(buffer: response.body))
    }

    /// The caller's open league portfolio in the league.
    func leaguePortfolio(_ leagueID: Int, token: String) async throws -> Int? {
        try await decode([PortfolioSummaryBody].self, "/api/portfolios", token: token).first { $0.leagueId == leagueID }?.id
    }

    func notificationTitles(token: String) async throws -> [String] {
        try await decode(NotificationPageBody.self, "/api/notifications", token: token).items.map(\.title)
    }
}

@Suite("Host controls")
struct HostControlTests {
    @Test("the SQL rules by hand: when a league has ended (league_ended), a return in percent (return_percent), who a league's notice reaches (notify_members), where a ratio ranks (ratio_rank)")
    func sqlRules() async throws {
        try await TemporaryDatabase.with { database in
            let (host, member) = try await TestApp.run(on: database) { client in
                let host = try await client.register("rules_host")
                let league = try await client.hostedLeague(#","ownerPlays":false,"endsAt":"2030-02-01T00:00:00Z""#, token: host.token)
                let member = try await client.register("rules_member")
                #expect(try await client.join(league.code, token: member.token).status == .ok)
                return (host.user.id, member.user.id)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let ended = try await pool.query(
                "SELECT league_ended(l, '2030-01-31T23:59:59Z'), league_ended(l, '2030-02-01T00:00:00Z') FROM leagues l"
            ).decode((Bool, Bool).self)
            try await pool.execute("UPDATE leagues SET finished_at = '2030-01-15T00:00:00Z'")
            let finished = try await pool.query("SELECT league_ended(l, '2030-01-20T00:00:00Z') FROM leagues l").decodeColumn(Bool.self)
            let returns = try await pool.query(
                "SELECT return_percent(10100, 10000)::text, return_percent(9944.46, 10000)::text, return_percent(5, 0)::text, return_percent(1, 3)::text"
            ).decode((String, String, String, String).self)
            // A ratio as itself; undefined ones by the mean return's sign; nothing with under two returns.
            let ranks = try await pool.query(
                """
                SELECT ratio_rank(1.5, 5, 0.01)::text, ratio_rank(NULL, 5, 0.002)::text, ratio_rank(NULL, 5, -0.002)::text,
                       ratio_rank(NULL, 5, 0)::text, ratio_rank(NULL, 1, 0.01) IS NULL, ratio_rank(-0.5, 5, -0.01)::text
                """
            ).decode((String, String, String, String, Bool, String).self)
            let told = try await pool.query("SELECT notify_members(id, 'Hello', 'class') FROM leagues").decodeColumn(Int.self)
            let inbox = try await pool.query(
                "SELECT user_id FROM notifications WHERE title = 'Hello' AND user_id IN (\(host), \(member))"
            ).decodeColumn(Int.self)
            await pool.close()
            #expect(ended.count == 1 && ended[0] == (false, true), "before its end; at its end")
            #expect(finished == [true], "finished before its end")
            #expect(returns[0] == ("1.00", "-0.56", "0", "-66.67"), "+1 %; −0.5554 % to two places; nothing paid in; 1 on 3 paid")
            #expect(told == [1] && inbox == [member], "the member is told; the host without a seat is not")
            #expect(ranks[0] == ("1.5", "Infinity", "-Infinity", "0", true, "-0.5"))
        }
    }

    @Test("a host who does not play has no seat, no portfolio and no rank, yet sees, changes and runs the league")
    func hostWithoutSeat() async throws {
        try await TestApp.run { client in
            let host = try await client.register("teacher_only")
            let league = try await client.hostedLeague(#","ownerPlays":false"#, token: host.token)
            #expect(!league.ownerPlays && league.memberCount == 0)
            #expect(try await client.leaguePortfolio(league.id, token: host.token) == nil)

            let student = try await client.register("student_one")
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let shown = try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token)
            #expect(shown.memberCount == 1 && shown.members?.map(\.username) == ["student_one"])
            #expect(try await client.decode([HostedLeagueBody].self, "/api/leagues", token: host.token).map(\.id) == [league.id])
            let board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: host.token)
            #expect(board.total == 1 && board.items.map(\.username) == ["student_one"])

            // The host cannot take a seat later, nor reset a portfolio of their own.
            let seat = try await client.join(league.code, token: host.token)
            #expect(seat.status == .conflict && client.problemCode(seat) == "already_member")
            let own = try await client.send(.post, "/api/leagues/\(league.id)/reset", body: "", token: host.token)
            #expect(own.status == .conflict && client.problemCode(own) == "not_playing")
            // Hosting stays the host's: changing, kicking.
            #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"name":"Class 7c"}"#, token: host.token).status == .ok)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(student.user.id)", token: host.token).status == .noContent)
            #expect(try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token).memberCount == 0)

            // By default the owner plays, as before.
            let playing = try await client.hostedLeague("", token: host.token)
            #expect(playing.ownerPlays && playing.memberCount == 1)
            #expect(try await client.leaguePortfolio(playing.id, token: host.token) != nil)
        }
    }

    @Test("a freeze refuses trades and new orders, on /api and /v2; resting orders wait unfilled, cancels work, members are told once")
    func freeze() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("freeze_host")
            let league = try await client.hostedLeague(#","ownerPlays":false"#, token: host.token)
            let student = try await client.register("freeze_student")
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let portfolio = try #require(try await client.leaguePortfolio(league.id, token: student.token))
            let waiting = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":2,"type":"limit","limitPrice":"140","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                token: student.token)
            let cancelled = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                token: student.token)
            let key = try await client.apiKey(token: student.token, portfolioID: portfolio)

            let other = try await client.send(.post, "/api/leagues/\(league.id)/freeze", body: "{}", token: student.token)
            #expect(other.status == .forbidden)
            let frozen = try await client.send(.post, "/api/leagues/\(league.id)/freeze", body: #"{"reason":"Test on Friday"}"#, token: host.token)
            #expect(frozen.status == .ok, "\(String(buffer: frozen.body))")
            let body = try JSONDecoder().decode(HostedLeagueBody.self, from: Data(buffer: frozen.body))
            #expect(body.frozen && body.frozenReason == "Test on Friday")
            // Freezing again changes nothing and tells nobody twice.
            #expect(try await client.send(.post, "/api/leagues/\(league.id)/freeze", body: "", token: host.token).status == .ok)
            let told = try await client.decode(NotificationPageBody.self, "/api/notifications", token: student.token).items
                .filter { $0.title == "Trading frozen" }
            #expect(told.count == 1 && told[0].body.contains("Test on Friday"))

            let trade = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(portfolio)}"#, token: student.token)
            #expect(trade.status == .conflict && client.problemCode(trade) == "trading_frozen")
            let order = try await client.placeOrder(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"120","portfolioId":\#(portfolio)}"#, token: student.token)
            #expect(order.status == .conflict && client.problemCode(order) == "trading_frozen")
            let bot = try await client.alpaca(.post, "/v2/orders", key: key,
                                              body: #"{"symbol":"AAPL","qty":"1","side":"buy","type":"market","time_in_force":"day"}"#)
            #expect(bot.status == .forbidden, "\(String(buffer: bot.body))")
            let account = try JSONSerialization.jsonObject(with: Data(buffer: try await client.alpaca(.get, "/v2/account", key: key).body)) as? [String: Any]
            #expect(account?["trading_blocked"] as? Bool == true)
            // The price crosses the resting order's limit: it waits. A cancel still works.
            try await client.setPrice("AAPL", "138")
            #expect(try await client.order(waiting.id, token: student.token).status == "new")
            #expect(try await client.delete("/api/orders/\(cancelled.id)", token: student.token).status == .ok)
            #expect(try await client.order(cancelled.id, token: student.token).status == "canceled")

            let open = try await client.send(.post, "/api/leagues/\(league.id)/unfreeze", body: "", token: host.token)
            #expect(try open.status == .ok && !JSONDecoder().decode(HostedLeagueBody.self, from: Data(buffer: open.body)).frozen)
            #expect(try await client.notificationTitles(token: student.token).contains("Trading resumed"))
            try await client.setPrice("AAPL", "137")
            #expect(try await client.order(waiting.id, token: student.token).status == "filled")
            #expect(try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(portfolio)}"#, token: student.token).status == .ok)
        }
    }

    @Test("a member resets their own portfolio while the allowance lasts, the host any member's; the old one is archived, its orders cancelled")
    func resets() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("reset_host")
            let league = try await client.hostedLeague(#","resetsAllowed":1"#, token: host.token)
            #expect(league.resetsAllowed == 1)
            let student = try await client.register("reset_student")
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let first = try #require(try await client.leaguePortfolio(league.id, token: student.token))
            _ = try await client.tradeOK("buy", "AAPL", 60, token: student.token, portfolioID: first)
            let resting = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":2,"type":"limit","limitPrice":"100","timeInForce":"gtc","portfolioId":\#(first)}"#,
                token: student.token)

            let own = try await client.send(.post, "/api/leagues/\(league.id)/reset", body: "", token: student.token)
            #expect(own.status == .ok, "\(String(buffer: own.body))")
            let reset = try JSONDecoder().decode(ResetBody.self, from: Data(buffer: own.body))
            #expect(reset.previousPortfolioId == first && reset.portfolioId != first && reset.resets == 1)
            #expect(try await client.leaguePortfolio(league.id, token: student.token) == reset.portfolioId)
            let fresh = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(reset.portfolioId)", token: student.token)
            #expect(fresh.cash == "10000.00" && fresh.reserved == "0.00")
            #expect(try await client.order(resting.id, token: student.token).status == "canceled")
            #expect(try await client.notificationTitles(token: student.token).contains("League portfolio reset"))
            let again = try await client.send(.post, "/api/leagues/\(league.id)/reset", body: "", token: student.token)
            #expect(again.status == .conflict && client.problemCode(again) == "no_resets_left")

            // The host's resets are not the member's to spend; others may not reset anyone.
            let stranger = try await client.register("reset_other")
            #expect(try await client.join(league.code, token: stranger.token).status == .ok)
            let path = "/api/leagues/\(league.id)/members/\(student.user.id)/reset"
            #expect(try await client.send(.post, path, body: "", token: stranger.token).status == .forbidden)
            let byHost = try await client.send(.post, path, body: "", token: host.token)
            #expect(try byHost.status == .ok && JSONDecoder().decode(ResetBody.self, from: Data(buffer: byHost.body)).resets == 2)
            let nobody = try await client.send(.post, "/api/leagues/\(league.id)/members/999999/reset", body: "", token: host.token)
            #expect(nobody.status == .notFound)
            let standings = try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token).members ?? []
            #expect(standings.first { $0.username == "reset_student" }?.resets == 2)
            #expect(standings.first { $0.username == "reset_other" }?.resets == 0)

            // A host who plays and names their own seat spends the allowance like anyone.
            let hostsOwn = "/api/leagues/\(league.id)/members/\(host.user.id)/reset"
            #expect(try await client.send(.post, hostsOwn, body: "", token: host.token).status == .ok)
            let hostsSecond = try await client.send(.post, hostsOwn, body: "", token: host.token)
            #expect(hostsSecond.status == .conflict && client.problemCode(hostsSecond) == "no_resets_left")

            // A shared league has no league portfolios to reset, and no allowance.
            let shared = try await client.createLeague(#"{"name":"Shared"}"#, token: host.token)
            let refused = try await client.send(.post, "/api/leagues/\(shared.id)/members/\(host.user.id)/reset", body: "", token: host.token)
            #expect(refused.status == .conflict && client.problemCode(refused) == "shared_league")
            let frozen = try await client.send(.post, "/api/leagues/\(shared.id)/freeze", body: "", token: host.token)
            #expect(frozen.status == .conflict && client.problemCode(frozen) == "shared_league")
            let allowance = try await client.send(.post, "/api/leagues/create", body: #"{"name":"S","resetsAllowed":2}"#, token: host.token)
            #expect(allowance.status == .unprocessableContent)
        }
    }
}
