import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct RosterStudentBody: Decodable {
    let userId: Int
    let username: String
    let displayName: String
    let password: String
}

struct RosterBody: Decodable {
    let students: [RosterStudentBody]
}

struct MeBody: Decodable {
    let id: Int
    let username: String
    let displayName: String?
    let managedBy: Int?
}

extension TestClientProtocol {
    func roster(_ leagueID: Int, _ names: [String], token: String) async throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: ["students": names.map { ["displayName": $0] }])
        return try await send(.post, "/api/leagues/\(leagueID)/roster", body: String(decoding: body, as: UTF8.self), token: token)
    }

    func token(_ response: TestResponse) throws -> String {
        try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body)).token
    }
}

@Suite("Class rosters")
struct RosterTests {
    @Test("a host pastes a class's names and gets logins (no e-mail) that work, seated and funded, shown by their names in the league")
    func createRoster() async throws {
        try await TestApp.run { client in
            let host = try await client.register("roster_host")
            let league = try await client.hostedLeague(#","ownerPlays":false"#, token: host.token)
            let names = ["José Núñez", "  Ana Lee  ", "李小龙", "Ana Lee"]
            let response = try await client.roster(league.id, names, token: host.token)
            #expect(response.status == .created, "\(String(buffer: response.body))")
            let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: response.body)).students
            #expect(students.map(\.displayName) == ["José Núñez", "Ana Lee", "李小龙", "Ana Lee"])
            #expect(students[0].username.hasPrefix("jose-") && students[1].username.hasPrefix("ana-") && students[2].username.hasPrefix("student-"))
            #expect(Set(students.map(\.username)).count == 4)
            for student in students {
                #expect(student.username.range(of: "^[a-z0-9_-]{3,32}$", options: .regularExpression) != nil)
                #expect(student.password.count >= 12)
                let login = try await client.login(student.username, password: student.password)
                #expect(login.status == .ok)
                let me = try await client.decode(MeBody.self, "/api/me", token: try client.token(login))
                #expect(me.id == student.userId && me.displayName == student.displayName && me.managedBy == host.user.id)
                // Seated: a league portfolio with the starting cash.
                let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: try client.token(login))
                #expect(portfolios.first { $0.leagueId == league.id }?.cash == "10000.00")
            }
            let shown = try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token)
            #expect(shown.memberCount == 4)
            let board = try await client.get("/api/leagues/\(league.id)/leaderboard", token: host.token)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(buffer: board.body)) as? [String: Any])["items"] as? [[String: Any]]
            #expect(Set(items?.compactMap { $0["displayName"] as? String } ?? []) == ["José Núñez", "Ana Lee", "李小龙"])
            // A player who registered has no display name and no manager.
            let me = try await client.decode(MeBody.self, "/api/me", token: host.token)
            #expect(me.displayName == nil && me.managedBy == nil)
            // Its audit event counts the students and names none, and holds no password.
            let log = try await client.audit("/api/leagues/\(league.id)/audit", token: host.token)
            #expect(log.items.map(\.action) == ["league.roster_create"] && log.items[0].details["students"]?.text == "4")
            let raw = String(buffer: try await client.get("/api/leagues/\(league.id)/audit", token: host.token).body)
            #expect(!students.contains { raw.contains($0.password) || raw.contains($0.displayName) })
        }
    }

    @Test("a roster is all or nothing: refused for a member, an empty or too long list, a bad name, or a full league, with no account made")
    func refusedRosters() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                let host = try await client.register("strict_host")
                let league = try await client.hostedLeague(#","maxMembers":3"#, token: host.token)
                let member = try await client.register("strict_member")
                #expect(try await client.join(league.code, token: member.token).status == .ok)

                let notOwner = try await client.roster(league.id, ["Kim"], token: member.token)
                #expect(notOwner.status == .forbidden)
                #expect(try await client.roster(league.id, [], token: host.token).status == .unprocessableContent)
                #expect(try await client.roster(league.id, Array(repeating: "Kim", count: 201), token: host.token).status == .unprocessableContent)
                let long = try await client.roster(league.id, ["Kim", String(repeating: "x", count: 65)], token: host.token)
                #expect(long.status == .unprocessableContent && client.problemCode(long) == "validation_failed")
                #expect(try await client.roster(league.id, ["Kim", "bad\u{0007}name"], token: host.token).status == .unprocessableContent)
                let full = try await client.roster(league.id, ["Kim", "Lee"], token: host.token)
                #expect(full.status == .conflict && client.problemCode(full) == "league_full")
                // One more fits.
                #expect(try await client.roster(league.id, ["Kim"], token: host.token).status == .created)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let managed = try await pool.query("SELECT count(*) FROM users WHERE managed_by IS NOT NULL").decodeColumn(Int.self)
            let events = try await pool.query("SELECT count(*) FROM audit_events").decodeColumn(Int.self)
            await pool.close()
            #expect(managed == [1] && events == [1])
        }
    }

    @Test("the host resets a student's password: the old one and every token stop at once, on another process too; only for a student they manage")
    func passwordReset() async throws {
        try await TemporaryDatabase.with { database in
            // A long token cache: only the announced revocation can make the other process refuse at once.
            let longCache: @Sendable (inout AppConfiguration) -> Void = { $0.tokenCacheLifetime = .seconds(600) }
            try await TestApp.run(on: database, configure: longCache) { a in
                try await TestApp.run(on: database, configure: longCache) { b in
                    let host = try await a.register("reset_host")
                    let league = try await a.hostedLeague("", token: host.token)
                    let created = try await a.roster(league.id, ["Sam Smith"], token: host.token)
                    let student = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: created.body)).students[0]
                    let old = try a.token(try await a.login(student.username, password: student.password))
                    #expect(try await b.get("/api/me", token: old).status == .ok)

                    let reset = try await a.send(.post, "/api/leagues/\(league.id)/members/\(student.userId)/password", body: "", token: host.token)
                    #expect(reset.status == .ok)
                    let password = try #require(try JSONSerialization.jsonObject(with: Data(buffer: reset.body)) as? [String: String])["password"] ?? ""
                    #expect(password.count >= 12 && password != student.password)
                    #expect(try await a.get("/api/me", token: old).status == .unauthorized)
                    let started = ContinuousClock.now
                    var refused = false
                    while !refused && ContinuousClock.now - started < .seconds(5) {
                        refused = try await b.get("/api/me", token: old).status == .unauthorized
                        if !refused { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    #expect(refused, "the other process refused the old token within 5 s, its cache holding it 600 s")
                    #expect(try await a.login(student.username, password: student.password).status == .unauthorized)
                    #expect(try await a.login(student.username, password: password).status == .ok)

                    // Not a managed student of this host: a self-registered member, or someone else's class.
                    let member = try await a.register("reset_member")
                    #expect(try await a.join(league.code, token: member.token).status == .ok)
                    let unmanaged = try await a.send(.post, "/api/leagues/\(league.id)/members/\(member.user.id)/password", body: "", token: host.token)
                    #expect(unmanaged.status == .forbidden && a.problemCode(unmanaged) == "not_managed")
                    let byMember = try await a.send(.post, "/api/leagues/\(league.id)/members/\(student.userId)/password", body: "", token: member.token)
                    #expect(byMember.status == .forbidden)
                    let other = try await a.register("other_host")
                    let otherLeague = try await a.hostedLeague("", token: other.token)
                    let foreign = try await a.send(.post, "/api/leagues/\(otherLeague.id)/members/\(student.userId)/password", body: "", token: other.token)
                    #expect(foreign.status == .forbidden && a.problemCode(foreign) == "not_managed")
                    let log = try await a.audit("/api/leagues/\(league.id)/audit", token: host.token)
                    #expect(log.items.map(\.action) == ["league.password_reset", "league.roster_create"])
                    #expect(log.items[0].targetUserId == student.userId)
                }
            }
        }
    }

    @Test("generated logins: names folded to plain letters, a fallback for names without any, passwords of three groups of four")
    func generatedCredentials() async throws {
        // Through the API, so the rule is the server's: each name's username prefix.
        try await TestApp.run { client in
            let host = try await client.register("names_host")
            let league = try await client.hostedLeague("", token: host.token)
            let response = try await client.roster(league.id, ["Zoë-Ann O'Neil", "Ωmega", "12 Monkeys", "Bartholomew-Alexander Smith", "!!!"], token: host.token)
            let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: response.body)).students
            let prefixes = students.map { String($0.username.dropLast(5)) }
            #expect(prefixes == ["zoe", "mega", "12", "bartholomew", "student"])
            #expect(students.allSatisfy { $0.password.range(of: "^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$", options: .regularExpression) != nil })
        }
    }

    @Test("the host's page: the join links students' devices reach (PUBLIC_URL, the address listened on, none on loopback) and who has not traded yet; members see neither")
    func hostsPage() async throws {
        try await TemporaryDatabase.with { database in
            let setups: [(@Sendable (inout AppConfiguration) -> Void, @Sendable (String) -> [String])] = [
                ({ $0.publicURL = "https://game.school.example" }, { ["https://game.school.example/join/\($0)"] }),
                ({ $0.host = "192.168.1.5"; $0.port = 8080 }, { ["http://192.168.1.5:8080/join/\($0)"] }),
                ({ $0.host = "127.0.0.1" }, { _ in [] }),
            ]
            for (index, (configure, expected)) in setups.enumerated() {
                try await TestApp.run(on: database, configure: configure) { client in
                    _ = try await client.seedMarket()
                    let host = try await client.register("page_host\(index)")
                    let league = try await client.hostedLeague("", token: host.token)
                    let created = try await client.roster(league.id, ["Tia", "Uma"], token: host.token)
                    let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: created.body)).students
                    let tia = try client.token(try await client.login(students[0].username, password: students[0].password))
                    let portfolio = try #require(try await client.leaguePortfolio(league.id, token: tia))
                    _ = try await client.tradeOK("buy", "AAPL", 1, token: tia, portfolioID: portfolio)

                    let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/leagues/\(league.id)", token: host.token).body)) as? [String: Any])
                    #expect(page["joinLinks"] as? [String] == expected(league.code))
                    let members = page["members"] as? [[String: Any]] ?? []
                    let byName = Dictionary(uniqueKeysWithValues: members.map { ($0["displayName"] as? String ?? "", $0) })
                    #expect(byName["Tia"]?["trades"] as? Int == 1 && byName["Tia"]?["lastTradeAt"] is String)
                    #expect(byName["Uma"]?["trades"] as? Int == 0 && byName["Uma"]?["lastTradeAt"] == nil)
                    let seen = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/leagues/\(league.id)", token: tia).body)) as? [String: Any])
                    #expect(seen["joinLinks"] == nil && (seen["members"] as? [[String: Any]])?.allSatisfy { $0["trades"] == nil } == true)
                }
            }
        }
    }
}

