import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct AuditEventBody: Decodable {
    let id: Int
    let at: String
    let actorId: Int
    let actorUsername: String?
    let action: String
    let leagueId: Int?
    let targetUserId: Int?
    let details: [String: AnyJSON]
    let requestId: String?
}

struct AuditPageBody: Decodable {
    let items: [AuditEventBody]
    let nextBefore: Int?
}

/// A JSON value of an event's details, compared as text.
struct AnyJSON: Decodable, Equatable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) { text = value }
        else if let value = try? container.decode(Bool.self) { text = String(value) }
        else if let value = try? container.decode(Int.self) { text = String(value) }
        else if let value = try? container.decode([Int].self) { text = value.map(String.init).joined(separator: ",") }
        else if let value = try? container.decode([String].self) { text = value.joined(separator: ",") }
        else { text = "?" }
    }
}

extension TestClientProtocol {
    func audit(_ uri: String, token: String) async throws -> AuditPageBody {
        try await decode(AuditPageBody.self, uri, token: token)
    }
}

@Suite("Audit log")
struct AuditLogTests {
    @Test("every host action that succeeds writes exactly one event naming who, what, which league and whom; a refused one writes none")
    func hostActions() async throws {
        try await TestApp.run { client in
            let host = try await client.register("audit_host")
            let league = try await client.hostedLeague("", token: host.token)
            let student = try await client.register("audit_student")
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let id = league.id

            var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(host.token)"]
            headers[HTTPField.Name("X-Request-ID")!] = "patch-request-1"
            let patched = try await client.execute(uri: "/api/leagues/\(id)", method: .patch, headers: headers,
                                                   body: ByteBuffer(string: #"{"name":"Class 7c","maxMembers":30}"#))
            #expect(patched.status == .ok)
            #expect(try await client.send(.post, "/api/leagues/\(id)/freeze", body: #"{"reason":"Test on Friday"}"#, token: host.token).status == .ok)
            #expect(try await client.send(.post, "/api/leagues/\(id)/unfreeze", body: "", token: host.token).status == .ok)
            #expect(try await client.send(.post, "/api/leagues/\(id)/members/\(student.user.id)/reset", body: "", token: host.token).status == .ok)
            #expect(try await client.send(.post, "/api/leagues/\(id)/news", body: #"{"title":"Welcome","body":"Trade well."}"#, token: host.token).status == .created)
            #expect(try await client.get("/api/leagues/\(id)/report.csv", token: host.token).status == .ok)

            // Refused: a member's try at host actions, a bad change, a freeze of nothing.
            #expect(try await client.send(.post, "/api/leagues/\(id)/freeze", body: "", token: student.token).status == .forbidden)
            #expect(try await client.send(.patch, "/api/leagues/\(id)", body: #"{"name":""}"#, token: host.token).status == .unprocessableContent)
            #expect(try await client.get("/api/leagues/\(id)/report.csv", token: student.token).status == .forbidden)
            #expect(try await client.get("/api/leagues/\(id)/audit", token: student.token).status == .forbidden)

            #expect(try await client.delete("/api/leagues/kick/\(id)/\(student.user.id)", token: host.token).status == .noContent)

            let log = try await client.audit("/api/leagues/\(id)/audit", token: host.token)
            #expect(log.items.map(\.action) == ["league.kick", "league.report_export", "league.news", "league.reset_member",
                                                "league.unfreeze", "league.freeze", "league.update"])
            #expect(log.items.allSatisfy { $0.actorId == host.user.id && $0.actorUsername == "audit_host" && $0.leagueId == id })
            #expect(log.items.first { $0.action == "league.kick" }?.targetUserId == student.user.id)
            #expect(log.items.first { $0.action == "league.reset_member" }?.targetUserId == student.user.id)
            let update = try #require(log.items.last)
            #expect(update.details["fields"]?.text == "name,maxMembers" && update.requestId == "patch-request-1")
            #expect(log.items.first { $0.action == "league.freeze" }?.details["reasonGiven"]?.text == "true")

            // Pages of two, newest first, then the rest.
            let first = try await client.audit("/api/leagues/\(id)/audit?limit=2", token: host.token)
            let second = try await client.audit("/api/leagues/\(id)/audit?limit=10&before=\(try #require(first.nextBefore))", token: host.token)
            #expect(first.items.map(\.id) + second.items.map(\.id) == log.items.map(\.id) && second.nextBefore == nil)

            // Deleting the league is the host's last event; admins still read it.
            #expect(try await client.delete("/api/leagues/\(id)", token: host.token).status == .noContent)
            let admin = try await client.adminToken()
            let deleted = try await client.audit("/api/admin/audit?leagueId=\(id)&action=league.delete", token: admin)
            #expect(deleted.items.count == 1 && deleted.items[0].actorId == host.user.id)
            #expect(try await client.audit("/api/admin/audit?leagueId=\(id)", token: admin).items.count == 8)
        }
    }

    @Test("admin actions are logged with what they touched, filtered by action and actor; players cannot read the log")
    func adminActions() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            let player = try await client.register("audit_player")
            #expect(try await client.send(.post, "/api/admin/quotes", body: #"[{"symbol":"AAPL","price":"123.45"}]"#, token: admin).status == .ok)
            #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Hello","body":"All"}"#, token: admin).status == .created)
            #expect(try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"250.5"}"#, token: admin).status == .ok)
            #expect(try await client.send(.post, "/api/admin/corporate-actions",
                                          body: #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"2"}"#, token: admin).status == .created)
            // Refused: an unknown symbol's quote, funds below zero, a player's try.
            #expect(try await client.send(.post, "/api/admin/quotes", body: #"[{"symbol":"NOPE","price":"1"}]"#, token: admin).status != .ok)
            #expect(try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"-99999999"}"#, token: admin).status == .unprocessableContent)
            #expect(try await client.send(.post, "/api/admin/quotes", body: #"[{"symbol":"AAPL","price":"1"}]"#, token: player.token).status == .forbidden)
            #expect(try await client.get("/api/admin/audit", token: player.token).status == .forbidden)

            let all = try await client.audit("/api/admin/audit", token: admin)
            #expect(all.items.map(\.action) == ["admin.corporate_action", "admin.funds", "admin.broadcast", "admin.quotes", "admin.prices", "admin.instrument"])
            let funds = try await client.audit("/api/admin/audit?action=admin.funds", token: admin).items
            #expect(funds.count == 1 && funds[0].targetUserId == player.user.id && funds[0].details["amount"]?.text == "250.50")
            #expect(all.items.first { $0.action == "admin.quotes" }?.details["symbols"]?.text == "AAPL")
            let adminID = all.items[0].actorId
            #expect(try await client.audit("/api/admin/audit?actorId=\(adminID)", token: admin).items.count == 6)
            #expect(try await client.audit("/api/admin/audit?actorId=\(player.user.id)", token: admin).items.isEmpty)
            let bad = try await client.get("/api/admin/audit?action=league.launch", token: admin)
            #expect(bad.status == .unprocessableContent)
        }
    }

    @Test("the database itself refuses to change or remove an event, whoever asks")
    func appendOnly() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                let admin = try await client.adminToken()
                #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Kept","body":"for ever"}"#, token: admin).status == .created)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            var refused: [String] = []
            for statement: PostgresQuery in ["UPDATE audit_events SET action = 'admin.fx'", "DELETE FROM audit_events", "TRUNCATE audit_events"] {
                do { _ = try await pool.execute(statement) } catch let error as PostgresError { refused.append(error.code?.rawValue ?? "?") }
            }
            let kept = try await pool.query("SELECT action FROM audit_events").decodeColumn(String.self)
            await pool.close()
            #expect(refused == ["42501", "42501", "42501"])
            #expect(kept == ["admin.broadcast"])
        }
    }
}
