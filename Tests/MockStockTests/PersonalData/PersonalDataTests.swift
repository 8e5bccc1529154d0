import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

extension TestClientProtocol {
    func eraseMe(password: String, token: String) async throws -> TestResponse {
        try await send(.delete, "/api/me", body: #"{"password":"\#(password)"}"#, token: token)
    }
}

/// How many rows of the account's remain, table by table.
func rowsLeft(of userID: Int, in pool: PostgresConnectionPool) async throws -> [String: Int] {
    let counts = try await pool.query(
        """
        SELECT 'users', count(*) FROM users WHERE id = \(userID) OR bot_owner_id = \(userID)
        UNION ALL SELECT 'portfolios', count(*) FROM portfolios WHERE user_id = \(userID)
        UNION ALL SELECT 'orders', count(*) FROM orders WHERE user_id = \(userID)
        UNION ALL SELECT 'notifications', count(*) FROM notifications WHERE user_id = \(userID)
        UNION ALL SELECT 'api_keys', count(*) FROM api_keys WHERE user_id = \(userID)
        UNION ALL SELECT 'league_members', count(*) FROM league_members WHERE user_id = \(userID)
        UNION ALL SELECT 'achievements', count(*) FROM user_achievements WHERE user_id = \(userID)
        """
    ).decode((String, Int).self)
    return Dictionary(uniqueKeysWithValues: counts.filter { $0.1 > 0 }.map { ($0.0, $0.1) })
}

@Suite("A person's data: export and erasure")
struct PersonalDataTests {
    @Test("the export is one JSON file of everything the account owns: portfolios with holdings, trades, orders, cash, notifications, keys (no secret), bots, leagues")
    func export() async throws {
        try await TestApp.run { client in
            _ = try await client.seedMarket()
            let player = try await client.register("exporter")
            _ = try await client.tradeOK("buy", "AAPL", 3, token: player.token)
            #expect(try await client.send(.post, "/api/orders", body: #"{"symbol":"MSFT","side":"buy","type":"limit","quantity":1,"limitPrice":"1.00","timeInForce":"gtc"}"#,
                                          token: player.token).status == .created)
            let key = try await client.apiKey(token: player.token)
            #expect(try await client.send(.post, "/api/bots", body: #"{"name":"exporter_bot"}"#, token: player.token).status == .created)
            let host = try await client.register("export_host")
            let league = try await client.hostedLeague("", token: host.token)
            #expect(try await client.join(league.code, token: player.token).status == .ok)

            let response = try await client.get("/api/me/export", token: player.token)
            #expect(response.status == .ok)
            #expect(response.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
            let text = String(buffer: response.body)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(Set(document.keys).isSuperset(of: ["exportedAt", "user", "portfolios", "trades", "orders", "cashMovements", "notifications",
                                                         "apiKeys", "bots", "leagues"]))
            #expect((document["user"] as? [String: Any])?["username"] as? String == "exporter")
            let portfolios = document["portfolios"] as? [[String: Any]] ?? []
            #expect(portfolios.count == 2, "the personal one and the league's")
            let personal = try #require(portfolios.first { $0["kind"] as? String == "personal" })
            #expect((personal["holdings"] as? [[String: Any]])?.map { $0["symbol"] as? String } == ["AAPL"])
            let trades = document["trades"] as? [[String: Any]] ?? []
            #expect(trades.count == 1 && trades[0]["quantity"] as? Int == 3 && trades[0]["price"] is String)
            #expect((document["orders"] as? [[String: Any]])?.contains { $0["symbol"] as? String == "MSFT" } == true)
            let movements = document["cashMovements"] as? [[String: Any]] ?? []
            #expect(movements.filter { $0["kind"] as? String == "starting_cash" }.count == 2, "starting cash, and the league's")
            #expect((document["apiKeys"] as? [[String: Any]])?.map { $0["keyId"] as? String } == [key.keyID])
            #expect((document["bots"] as? [[String: Any]])?.map { $0["username"] as? String } == ["exporter_bot"])
            #expect((document["leagues"] as? [[String: Any]])?.map { $0["leagueId"] as? Int } == [league.id])
            #expect(!text.contains(key.secret) && !text.contains("$scrypt$") && !text.contains("export_host"))
            #expect(try await client.get("/api/me/export", token: "nope").status == .unauthorized)
        }
    }

    @Test("a player erases their account with its password: every row of theirs goes, tokens and keys stop at once on every process, the name is free again, the log keeps ids only")
    func eraseOwn() async throws {
        try await TemporaryDatabase.with { database in
            let longCache: @Sendable (inout AppConfiguration) -> Void = { $0.tokenCacheLifetime = .seconds(600) }
            let (userID, member, memberPortfolio) = try await TestApp.run(on: database, configure: longCache) { a in
                try await TestApp.run(on: database, configure: longCache) { b in
                    _ = try await a.seedMarket()
                    let player = try await a.register("leaver", password: "my own password")
                    _ = try await a.tradeOK("buy", "AAPL", 2, token: player.token)
                    let key = try await a.apiKey(token: player.token)
                    #expect(try await b.alpaca(.get, "/v2/account", key: key).status == .ok)
                    #expect(try await b.get("/api/me", token: player.token).status == .ok)
                    // A league they own, with a member trading in it.
                    let league = try await a.hostedLeague("", token: player.token)
                    let member = try await a.register("stayer")
                    #expect(try await a.join(league.code, token: member.token).status == .ok)
                    let memberPortfolio = try #require(try await a.leaguePortfolio(league.id, token: member.token))
                    _ = try await a.tradeOK("buy", "AAPL", 1, token: member.token, portfolioID: memberPortfolio)

                    let wrong = try await a.eraseMe(password: "not my password", token: player.token)
                    #expect(wrong.status == .forbidden && a.problemCode(wrong) == "wrong_password")
                    #expect(try await a.get("/api/me", token: player.token).status == .ok)

                    #expect(try await a.eraseMe(password: "my own password", token: player.token).status == .noContent)
                    #expect(try await a.get("/api/me", token: player.token).status == .unauthorized)
                    #expect(try await a.alpaca(.get, "/v2/account", key: key).status == .unauthorized)
                    let started = ContinuousClock.now
                    var refused = false
                    while !refused && ContinuousClock.now - started < .seconds(5) {
                        let tokenRefused = try await b.get("/api/me", token: player.token).status == .unauthorized
                        let keyRefused = try await b.alpaca(.get, "/v2/account", key: key).status == .unauthorized
                        refused = tokenRefused && keyRefused
                        if !refused { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    #expect(refused, "the other process refused the token and the key within 5 s, its caches holding them 600 s")
                    #expect(try await a.login("leaver", password: "my own password").status == .unauthorized)
                    // The name may be taken again; the member's league was deleted as when its owner leaves.
                    _ = try await a.register("leaver")
                    #expect(try await a.get("/api/leagues/\(league.id)", token: member.token).status == .notFound)
                    let admin = try await a.adminToken()
                    let log = try await a.audit("/api/admin/audit?action=account.delete", token: admin).items
                    #expect(log.count == 1 && log[0].actorId == player.user.id && log[0].actorUsername == nil && log[0].targetUserId == player.user.id)
                    return (player.user.id, member.user.id, memberPortfolio)
                }
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let left = try await rowsLeft(of: userID, in: pool)
            let trace = try await pool.query(
                "SELECT count(*) FROM audit_events WHERE details::text LIKE '%leaver%' OR request_id LIKE '%leaver%'"
            ).decodeColumn(Int.self)
            // The member keeps their (archived) league portfolio with its trade.
            let kept = try await pool.query(
                "SELECT count(*) FROM trades t JOIN portfolios p ON p.id = t.portfolio_id WHERE p.id = \(memberPortfolio) AND p.user_id = \(member)"
            ).decodeColumn(Int.self)
            await pool.close()
            #expect(left.isEmpty, "\(left)")
            #expect(trace == [0] && kept == [1])
        }
    }

    @Test("a host erases a student of their roster, and only such a student; an admin erases anyone but an admin")
    func eraseByHostAndAdmin() async throws {
        try await TemporaryDatabase.with { database in
            let (student, player) = try await TestApp.run(on: database) { client in
                let host = try await client.register("erasing_host")
                let league = try await client.hostedLeague("", token: host.token)
                let created = try await client.roster(league.id, ["Pat One", "Pat Two"], token: host.token)
                let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: created.body)).students
                let member = try await client.register("self_registered")
                #expect(try await client.join(league.code, token: member.token).status == .ok)
                let studentToken = try client.token(try await client.login(students[0].username, password: students[0].password))

                let unmanaged = try await client.delete("/api/leagues/\(league.id)/members/\(member.user.id)/account", token: host.token)
                #expect(unmanaged.status == .forbidden && client.problemCode(unmanaged) == "not_managed", "\(unmanaged.status) \(String(buffer: unmanaged.body))")
                let byMember = try await client.delete("/api/leagues/\(league.id)/members/\(students[0].userId)/account", token: member.token)
                #expect(byMember.status == .forbidden)
                #expect(try await client.delete("/api/leagues/\(league.id)/members/\(students[0].userId)/account", token: host.token).status == .noContent)
                #expect(try await client.get("/api/me", token: studentToken).status == .unauthorized)
                let shown = try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token)
                #expect(shown.memberCount == 3 && shown.members?.contains { $0.userId == students[0].userId } == false)
                let log = try await client.audit("/api/leagues/\(league.id)/audit", token: host.token).items
                #expect(log.first?.action == "league.member_delete" && log.first?.targetUserId == students[0].userId)

                let admin = try await client.adminToken()
                #expect(try await client.delete("/api/admin/users/\(member.user.id)", token: host.token).status == .forbidden)
                let adminID = try await client.decode(MeBody.self, "/api/me", token: admin).id
                #expect(try await client.delete("/api/admin/users/\(adminID)", token: admin).status == .forbidden)
                #expect(try await client.delete("/api/admin/users/999999", token: admin).status == .notFound)
                #expect(try await client.delete("/api/admin/users/\(member.user.id)", token: admin).status == .noContent)
                #expect(try await client.get("/api/me", token: member.token).status == .unauthorized)
                #expect(try await client.audit("/api/admin/audit?action=admin.user_delete", token: admin).items.map(\.targetUserId) == [member.user.id])
                #expect(try await client.decode(HostedLeagueBody.self, "/api/leagues/\(league.id)", token: host.token).memberCount == 2)
                return (students[0].userId, member.user.id)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let left = try await rowsLeft(of: student, in: pool).merging(try await rowsLeft(of: player, in: pool), uniquingKeysWith: +)
            await pool.close()
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test("a league's retention erases its managed students that many days after it ends, except one still playing another running league of the host")
    func retention() async throws {
        try await TemporaryDatabase.with { database in
            let (hostID, leagueID, ann, bob) = try await TestApp.run(on: database) { client in
                let host = try await client.register("retention_host")
                let formatter = ISO8601DateFormatter()
                let start = formatter.string(from: Date().addingTimeInterval(-86_400))
                let end = formatter.string(from: Date().addingTimeInterval(2))
                let ending = try await client.hostedLeague(#","startsAt":"\#(start)","endsAt":"\#(end)","deleteManagedAfterDays":0"#, token: host.token)
                let running = try await client.hostedLeague("", token: host.token)
                let bad = try await client.send(.patch, "/api/leagues/\(running.id)", body: #"{"deleteManagedAfterDays":366}"#, token: host.token)
                #expect(bad.status == .unprocessableContent)
                let kept = try await client.send(.patch, "/api/leagues/\(running.id)", body: #"{"deleteManagedAfterDays":30}"#, token: host.token)
                let keptBody = try JSONSerialization.jsonObject(with: Data(buffer: kept.body)) as? [String: Any]
                #expect(keptBody?["deleteManagedAfterDays"] as? Int == 30)
                let created = try await client.roster(ending.id, ["Ann Ames", "Bob Burns"], token: host.token)
                let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: created.body)).students
                // Bob also plays the host's running league.
                let bob = try client.token(try await client.login(students[1].username, password: students[1].password))
                #expect(try await client.join(running.code, token: bob).status == .ok)
                try await Task.sleep(for: .seconds(3))
                return (host.user.id, ending.id, students[0], students[1])
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let due = try await pool.query("SELECT league_id, host_id, user_id FROM managed_erasure_due(now())").decode((Int, Int, Int).self)
            #expect(due.count == 1 && due[0] == (leagueID, hostID, ann.userId))
            // A server starting does its chores at once: the retention's erasure among them.
            try await TestApp.run(on: database) { client in
                let started = ContinuousClock.now
                while try await client.login(ann.username, password: ann.password).status == .ok, ContinuousClock.now - started < .seconds(10) {
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(try await client.login(ann.username, password: ann.password).status == .unauthorized)
                #expect(try await client.login(bob.username, password: bob.password).status == .ok)
            }
            let events = try await pool.query(
                "SELECT actor_id, target_user_id, details->>'retention' FROM audit_events WHERE action = 'league.member_delete' AND league_id = \(leagueID)"
            ).decode((Int, Int, String?).self)
            let left = try await rowsLeft(of: ann.userId, in: pool)
            await pool.close()
            #expect(events.count == 1 && events[0] == (hostID, ann.userId, "true"))
            #expect(left.isEmpty, "\(left)")
        }
    }
}
