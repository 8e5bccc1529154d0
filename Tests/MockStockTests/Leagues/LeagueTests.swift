import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct LeagueBody: Decodable {
    let id: Int
    let name: String
    let code: String
    let ownerId: Int
    let mode: String
    let startingCash: String
    let startsAt: String
    let endsAt: String?
    let maxMembers: Int?
    let memberCount: Int
    let createdAt: String
    let members: [StandingBody]?
}

struct StandingBody: Decodable {
    let rank: Int
    let userId: Int
    let username: String
    let netWorth: String
    let cash: String
    let holdingsValue: String
    let returnPercent: String
}

struct StandingPageBody: Decodable {
    let items: [StandingBody]
    let total: Int
}

extension TestClientProtocol {
    func createLeague(_ body: String, token: String) async throws -> LeagueBody {
        let response = try await send(.post, "/api/leagues/create", body: body, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(LeagueBody.self, from: Data(buffer: response.body))
    }

    func join(_ code: String, token: String) async throws -> TestResponse {
        try await send(.post, "/api/leagues/join/\(code)", body: "", token: token)
    }

    func delete(_ uri: String, token: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .delete, headers: [.authorization: "Bearer \(token)"])
    }
}

@Suite("Leagues")
struct LeagueTests {
    @Test("create, join by code, see both on the leaderboard, ranked by net worth with shared ranks")
    func createJoinRank() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let owner = try await client.register("league_owner")
            let friend = try await client.register("friend")
            let league = try await client.createLeague(#"{"name":"  Class 7B  "}"#, token: owner.token)
            #expect(league.name == "Class 7B")
            #expect(league.mode == "shared")
            #expect(league.startingCash == "100000.00")
            #expect(league.ownerId == owner.user.id)
            #expect(league.memberCount == 1)
            // Capitals and digits without look-alikes (no 0/O, 1/I/L), typed in any case.
            #expect(league.code.count == 12 && league.code.allSatisfy { "ABCDEFGHJKMNPQRSTUVWXYZ23456789".contains($0) }, "\(league.code)")
            let wrong = (league.code.first == "B" ? "C" : "B") + league.code.dropFirst()
            #expect(try await client.join(wrong, token: friend.token).status == .notFound)
            let joined = try await client.join(league.code.lowercased(), token: friend.token)
            #expect(joined.status == .ok)
            #expect(try decodeJSON(LeagueBody.self, joined).memberCount == 2)
            let again = try await client.join(league.code, token: friend.token)
            #expect(try decodeProblem(again).code == "already_member")

            // Equal net worth shares the rank; a richer member ranks first.
            var board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: owner.token)
            #expect(board.items.map(\.rank) == [1, 1])
            #expect(board.total == 2)
            try await client.setPrice("ONE", "1")
            _ = try await client.tradeOK("buy", "ONE", 100, token: friend.token)
            try await client.setPrice("ONE", "2")
            board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: owner.token)
            #expect(board.items.map(\.username) == ["friend", "league_owner"])
            #expect(board.items.map(\.rank) == [1, 2])
            // 10,000 starting cash + 250 (joined a league) + 100 (first trade) rewards + 100 gain:
            // rewards count as paid in, so the return is 100 / 10,350.
            #expect(board.items[0].netWorth == "10450.00")
            #expect(board.items[0].returnPercent == "0.97")
            let details = try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: friend.token)
            #expect(details.members?.map(\.username) == ["friend", "league_owner"])
            #expect(try await client.decode([LeagueBody].self, "/api/leagues", token: friend.token).map(\.id) == [league.id])
        }
    }

    @Test("a league is open for trading from its start until its end, and not once finished (SQL league_open)")
    func leagueOpen() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                let token = try await client.register("term_host").token
                let created = try await client.send(.post, "/api/leagues/create", body:
                    #"{"name":"Term","mode":"isolated","startsAt":"2030-01-01T00:00:00Z","endsAt":"2030-02-01T00:00:00Z"}"#, token: token)
                #expect(created.status == .created, "\(String(buffer: created.body))")
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let open = try await pool.query(
                """
                SELECT league_open(l, '2029-12-31T23:59:59Z'), league_open(l, '2030-01-01T00:00:00Z'),
                       league_open(l, '2030-01-31T23:59:59Z'), league_open(l, '2030-02-01T00:00:00Z'),
                       league_open(NULL::leagues, '2029-01-01T00:00:00Z')
                FROM leagues l
                """
            ).decode((Bool, Bool, Bool, Bool, Bool).self)
            try await pool.execute("UPDATE leagues SET finished_at = '2030-01-15T00:00:00Z'")
            let finished = try await pool.query("SELECT league_open(l, '2030-01-20T00:00:00Z') FROM leagues l").decodeColumn(Bool.self)
            await pool.close()
            #expect(open.count == 1 && open[0] == (false, true, true, false, true), "before, at the start, before the end, at the end; no league")
            #expect(finished == [false])
        }
    }

    @Test("a league's life: it runs from its start to its end, is open while it runs unfrozen, and is finished once")
    func leagueLife() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                let token = try await client.register("life_host").token
                _ = try await client.createLeague(
                    #"{"name":"Life","mode":"isolated","startsAt":"2030-01-01T00:00:00Z","endsAt":"2030-02-01T00:00:00Z"}"#, token: token)
            }
            try await database.withPool { pool in
                func life(_ at: String) async throws -> [Bool] {
                    let row = try await pool.query(
                        """
                        SELECT league_running(l, \(at)::timestamptz), league_ended(l, \(at)::timestamptz),
                               league_finished(l), league_frozen(l), league_open(l, \(at)::timestamptz)
                        FROM leagues l
                        """
                    ).decode((Bool, Bool, Bool, Bool, Bool).self)[0]
                    return [row.0, row.1, row.2, row.3, row.4]
                }
                // running, ended, finished, frozen, open
                #expect(try await life("2029-12-31T23:59:59Z") == [false, false, false, false, false], "before the start")
                #expect(try await life("2030-01-15T00:00:00Z") == [true, false, false, false, true], "while it runs")
                #expect(try await life("2030-02-01T00:00:00Z") == [false, true, false, false, false], "at its end, not yet finished")
                try await pool.execute("UPDATE leagues SET frozen_at = now()")
                #expect(try await life("2030-01-15T00:00:00Z") == [true, false, false, true, false], "frozen: running but not open")
                try await pool.execute("UPDATE leagues SET frozen_at = NULL, finished_at = '2030-01-20T00:00:00Z'")
                #expect(try await life("2030-01-25T00:00:00Z") == [false, true, true, false, false], "finished early")
                // The background work that wants running leagues finds none; the finisher none to finish.
                let unfinished = try await pool.query("SELECT count(*)::int FROM leagues l WHERE NOT league_finished(l)").decodeColumn(Int.self)
                #expect(unfinished == [0])
            }
        }
    }

    @Test("only the owner kicks; the kicked cannot rejoin; the owner cannot kick themself; strangers see nothing")
    func kickAndAuthorization() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("boss_owner")
            let member = try await client.register("member_one")
            let other = try await client.register("member_two")
            let stranger = try await client.register("stranger")
            let league = try await client.createLeague(#"{"name":"Club"}"#, token: owner.token)
            _ = try await client.join(league.code, token: member.token)
            _ = try await client.join(league.code, token: other.token)

            let history = "/api/leagues/\(league.id)/history"
            for uri in ["/api/leagues/\(league.id)", "/api/leagues/\(league.id)/leaderboard", history, "\(history)?userId=\(owner.user.id)"] {
                #expect(try await client.get(uri, token: stranger.token).status == .notFound)
                #expect(try await client.get(uri, token: member.token).status == .ok)
            }
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(other.user.id)", token: stranger.token).status == .notFound)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(owner.user.id)", token: stranger.token).status == .notFound)
            #expect(try await client.delete("/api/leagues/leave/\(league.id)", token: stranger.token).status == .notFound)
            #expect(try await client.delete("/api/leagues/\(league.id)", token: stranger.token).status == .notFound)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(other.user.id)", token: member.token).status == .forbidden)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(owner.user.id)", token: member.token).status == .forbidden)
            #expect(try await client.delete("/api/leagues/\(league.id)", token: member.token).status == .forbidden)
            #expect(try await client.get("\(history)?userId=abc", token: member.token).status == .unprocessableContent)
            // None of the refused attempts changed anything.
            #expect(try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: owner.token).memberCount == 3)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(owner.user.id)", token: owner.token).status == .unprocessableContent)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(stranger.user.id)", token: owner.token).status == .notFound)

            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(member.user.id)", token: owner.token).status == .noContent)
            let rejoin = try await client.join(league.code, token: member.token)
            #expect(rejoin.status == .forbidden)
            #expect(try decodeProblem(rejoin).code == "banned_from_league")
            #expect(try await client.get("/api/leagues/\(league.id)", token: member.token).status == .notFound)
            let board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: owner.token)
            #expect(board.items.map(\.username).sorted() == ["boss_owner", "member_two"])
        }
    }

    @Test("a member leaves; when the owner leaves, the league is gone")
    func leaving() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("leaver_owner")
            let member = try await client.register("leaver")
            let league = try await client.createLeague(#"{"name":"Short-lived"}"#, token: owner.token)
            _ = try await client.join(league.code, token: member.token)
            #expect(try await client.delete("/api/leagues/leave/\(league.id)", token: member.token).status == .noContent)
            #expect(try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: owner.token).memberCount == 1)
            #expect(try await client.join(league.code, token: member.token).status == .ok)
            #expect(try await client.delete("/api/leagues/leave/\(league.id)", token: owner.token).status == .noContent)
            #expect(try await client.get("/api/leagues/\(league.id)", token: member.token).status == .notFound)
            #expect(try await client.join(league.code, token: member.token).status == .notFound)
        }
    }

    @Test("an isolated league funds a league portfolio, trades it only while running, and takes it away on leaving")
    func isolatedLeague() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let owner = try await client.register("iso_owner")
            let league = try await client.createLeague(#"{"name":"Iso","mode":"isolated","startingCash":"5000"}"#, token: owner.token)
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: owner.token)
            #expect(portfolios.map(\.leagueId) == [nil, league.id])
            let leaguePortfolio = portfolios[1]
            #expect(leaguePortfolio.cash == "5000.00")
            let movements = try await client.decode(CashMovementPageBody.self, "/api/cash-movements?portfolioId=\(leaguePortfolio.id)", token: owner.token)
            #expect(movements.items.map(\.kind) == ["starting_cash"])

            let bought = try await client.trade("buy", #"{"symbol":"ONE","amount":10,"portfolioId":\#(leaguePortfolio.id)}"#, token: owner.token)
            #expect(bought.status == .ok)
            let board = try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: owner.token)
            #expect(board.items.first?.cash == "4990.00")
            #expect(board.items.first?.netWorth == "5000.00")
            // The personal portfolio was not traded; it only received the rewards for
            // creating a league (250) and the first trade (100).
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: owner.token).cash == "10350.00")

            let future = try await client.createLeague(
                #"{"name":"Later","mode":"isolated","startsAt":"2099-01-01T00:00:00Z","endsAt":"2099-02-01T00:00:00Z"}"#, token: owner.token
            )
            let later = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: owner.token).first { $0.leagueId == future.id }!
            let early = try await client.trade("buy", #"{"symbol":"ONE","amount":1,"portfolioId":\#(later.id)}"#, token: owner.token)
            #expect(early.status == .conflict)

            #expect(try await client.delete("/api/leagues/\(league.id)", token: owner.token).status == .noContent)
            let after = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: owner.token)
            #expect(!after.contains { $0.id == leaguePortfolio.id })
            let gone = try await client.trade("buy", #"{"symbol":"ONE","amount":1,"portfolioId":\#(leaguePortfolio.id)}"#, token: owner.token)
            #expect(gone.status == .notFound)
        }
    }

    @Test("200 users joining a league of 50 at once: exactly 50 members")
    func maxMembersUnderConcurrency() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("crowd_owner")
            let league = try await client.createLeague(#"{"name":"Crowd","maxMembers":50}"#, token: owner.token)
            var tokens: [String] = []
            for index in 0..<200 { tokens.append(try await client.register("crowd\(index)").token) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for token in tokens {
                    group.addTask { try await client.join(league.code, token: token).status.code }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 49)
            #expect(statuses.filter { $0 == 409 }.count == 151)
            #expect(try await client.decode(LeagueBody.self, "/api/leagues/\(league.id)", token: owner.token).memberCount == 50)
        }
    }

    @Test("bad league settings are 422", arguments: [
        #"{"name":""}"#, #"{"name":"\#(String(repeating: "n", count: 65))"}"#, #"{"name":"x","startingCash":"0"}"#,
        #"{"name":"x","startingCash":"-5"}"#, #"{"name":"x","startingCash":"1e20"}"#, #"{"name":"x","mode":"solo"}"#,
        #"{"name":"x","startsAt":"2030-01-02T00:00:00Z","endsAt":"2030-01-01T00:00:00Z"}"#, #"{"name":"x","maxMembers":0}"#,
        #"{"name":"x","startsAt":"yesterday"}"#, #"{"name":"nul\u0000byte"}"#,
    ])
    func badSettings(_ body: String) async throws {
        try await TestApp.run { client in
            let owner = try await client.register("picky")
            let response = try await client.send(.post, "/api/leagues/create", body: body, token: owner.token)
            #expect(response.status == .unprocessableContent)
            #expect(try await client.decode([LeagueBody].self, "/api/leagues", token: owner.token).isEmpty)
        }
    }
}

func decodeJSON<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(buffer: response.body))
}

@Suite("Leagues: the owner's changes after creation")
struct LeagueChangeTests {
    struct ChangedLeague: Decodable {
        let name: String
        let endsAt: String?
        let joinUntil: String?
        let maxMembers: Int?
        let bots: String
    }

    @Test("the owner renames, moves the end, closes late joins and caps members; the rules stay; others get 403")
    func ownerChangesTheLeague() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("change_owner")
            let member = try await client.register("change_member")
            let league = try await client.createLeague(#"{"name":"Spring","maxMembers":5}"#, token: owner.token)
            #expect(try await client.join(league.code, token: member.token).status == .ok)
            func patch(_ body: String, token: String? = nil) async throws -> TestResponse {
                try await client.send(.patch, "/api/leagues/\(league.id)", body: body, token: token ?? owner.token)
            }
            let end = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 86_400))
            let changed = try await patch(#"{"name":" Spring term ","endsAt":"\#(end)","maxMembers":3,"bots":"separate"}"#)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            let body = try JSONDecoder().decode(ChangedLeague.self, from: Data(buffer: changed.body))
            #expect(body.name == "Spring term" && body.endsAt != nil && body.maxMembers == 3 && body.bots == "separate" && body.joinUntil == nil)
            // null clears; a field left out stays.
            let cleared = try JSONDecoder().decode(ChangedLeague.self, from: Data(buffer: try await patch(#"{"maxMembers":null}"#).body))
            #expect(cleared.maxMembers == nil && cleared.endsAt == body.endsAt && cleared.name == "Spring term")

            #expect(try await patch(#"{"name":"Mine"}"#, token: member.token).status == .forbidden)
            // Below the members seated, an end in the past, an empty name, a rule: refused, nothing changed.
            for refused in [#"{"maxMembers":1}"#, #"{"endsAt":"2020-01-01T00:00:00Z"}"#, #"{"name":"  "}"#,
                            #"{"rules":{"commissionFlat":"1"}}"#, #"{"name":"X","mode":"isolated"}"#, #"{"maxMembers":0}"#] {
                let response = try await patch(refused)
                #expect(response.status == .unprocessableContent, "\(refused): \(String(buffer: response.body))")
            }
            let now = try await client.decode(ChangedLeague.self, "/api/leagues/\(league.id)", token: owner.token)
            #expect(now.name == "Spring term" && now.maxMembers == nil)

            // A late-join window that has closed: joins are refused with their own code.
            let past = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-60))
            #expect(try await patch(#"{"joinUntil":"\#(past)"}"#).status == .ok)
            let late = try await client.join(league.code, token: try await client.register("change_late").token)
            #expect(late.status == .conflict && client.problemCode(late) == "join_closed")
            #expect(try await patch(#"{"joinUntil":null}"#).status == .ok)
            #expect(try await client.join(league.code, token: try await client.register("change_later").token).status == .ok)
        }
    }

    @Test("a join link opens the web client's join screen with its code; anything but letters and digits is dropped")
    func joinLink() async throws {
        try await TestApp.run { client in
            let link = try await client.execute(uri: "/join/abCD2345", method: .get)
            #expect(link.status == .seeOther && link.headers[.location] == "/#/leagues?join=abCD2345")
            let hostile = try await client.execute(uri: "/join/%3Cscript%3E", method: .get)
            #expect(hostile.status == .seeOther && hostile.headers[.location] == "/#/leagues?join=")
        }
    }

    @Test("a league created with a late-join window says so, and takes members until it closes")
    func joinUntilAtCreation() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("window_owner")
            let until = ISO8601DateFormatter().string(from: Date().addingTimeInterval(2))
            let league = try await client.createLeague(#"{"name":"Window","joinUntil":"\#(until)"}"#, token: owner.token)
            let shown = try await client.decode(ChangedLeague.self, "/api/leagues/\(league.id)", token: owner.token)
            #expect(shown.joinUntil != nil)
            #expect(try await client.join(league.code, token: try await client.register("window_early").token).status == .ok)
            try await Task.sleep(for: .milliseconds(2500))
            #expect(try await client.join(league.code, token: try await client.register("window_late").token).status == .conflict)
        }
    }
}
