import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

struct NotificationBody: Decodable {
    let id: Int
    let title: String
    let body: String
    let createdAt: String
    let readAt: String?
}

struct NotificationPageBody: Decodable {
    let items: [NotificationBody]
    let nextBefore: Int?
}

@Suite("Notifications and admin funds")
struct NotificationAndFundsTests {
    @Test("a kicked member is told; broadcasts reach everyone; unread filter and mark read; others' notices are 404")
    func notifications() async throws {
        try await TestApp.run { client in
            let admin = try await client.adminToken()
            let owner = try await client.register("n_owner")
            let member = try await client.register("n_member")
            let league = try await client.createLeague(#"{"name":"Noisy"}"#, token: owner.token)
            _ = try await client.join(league.code, token: member.token)
            #expect(try await client.delete("/api/leagues/kick/\(league.id)/\(member.user.id)", token: owner.token).status == .noContent)

            let sent = try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Market closed","body":"Back tomorrow."}"#, token: admin)
            #expect(sent.status == .created)
            #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"x","body":"y"}"#, token: member.token).status == .forbidden)

            let inbox = try await client.decode(NotificationPageBody.self, "/api/notifications", token: member.token)
            #expect(inbox.items.map(\.title) == ["Market closed", "Removed from a league", "Achievement earned: Team player"])
            #expect(inbox.items[1].body.contains("Noisy"))
            #expect(inbox.items[2].body == "Join a league with its code. Reward: $250.00 added to your personal portfolio.")
            let ownerInbox = try await client.decode(NotificationPageBody.self, "/api/notifications", token: owner.token)
            #expect(ownerInbox.items.map(\.title) == ["Market closed", "Achievement earned: League founder"])

            let kickNotice = inbox.items[1].id
            #expect(try await client.send(.post, "/api/notifications/\(kickNotice)/read", body: "", token: owner.token).status == .notFound)
            #expect(try await client.send(.post, "/api/notifications/\(kickNotice)/read", body: "", token: member.token).status == .noContent)
            let unread = try await client.decode(NotificationPageBody.self, "/api/notifications?unread=true", token: member.token)
            #expect(unread.items.map(\.title) == ["Market closed", "Achievement earned: Team player"])
            let firstPage = try await client.decode(NotificationPageBody.self, "/api/notifications?limit=1", token: member.token)
            #expect(firstPage.items.count == 1)
            let next = try #require(firstPage.nextBefore)
            let secondPage = try await client.decode(NotificationPageBody.self, "/api/notifications?limit=1&before=\(next)", token: member.token)
            #expect(secondPage.items.first?.readAt != nil)
            #expect(try await client.get("/api/notifications?unread=maybe", token: member.token).status == .unprocessableContent)
        }
    }

    @Test("mark all read marks every unread notice of the caller, broadcasts included, in one go; another player's stay unread")
    func markAllRead() async throws {
        struct Marked: Decodable { let marked: Int }
        try await TestApp.run { client in
            let admin = try await client.adminToken()
            let owner = try await client.register("all_owner")
            let member = try await client.register("all_member")
            let league = try await client.createLeague(#"{"name":"Readers"}"#, token: owner.token)
            _ = try await client.join(league.code, token: member.token)
            #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Market closed","body":"Back tomorrow."}"#, token: admin).status == .created)
            #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Market open","body":"Trade away."}"#, token: admin).status == .created)
            let unread = { (token: String) in
                try await client.decode(NotificationPageBody.self, "/api/notifications?unread=true", token: token).items.map(\.title)
            }
            // One read already (a broadcast): it is not marked again.
            let before = try await client.decode(NotificationPageBody.self, "/api/notifications", token: member.token).items
            #expect(before.map(\.title) == ["Market open", "Market closed", "Achievement earned: Team player"])
            #expect(try await client.send(.post, "/api/notifications/\(before[1].id)/read", body: "", token: member.token).status == .noContent)
            let ownerUnread = try await unread(owner.token)
            #expect(ownerUnread == ["Market open", "Market closed", "Achievement earned: League founder"])

            let response = try await client.send(.post, "/api/notifications/read", body: "", token: member.token)
            #expect(response.status == .ok)
            #expect(try JSONDecoder().decode(Marked.self, from: Data(buffer: response.body)).marked == 2)
            #expect(try await unread(member.token).isEmpty)
            #expect(try await client.decode(NotificationPageBody.self, "/api/notifications", token: member.token).items.allSatisfy { $0.readAt != nil })
            #expect(try await unread(owner.token) == ownerUnread)

            // Nothing left to mark; what comes later is unread again.
            let again = try await client.send(.post, "/api/notifications/read", body: "", token: member.token)
            #expect(try JSONDecoder().decode(Marked.self, from: Data(buffer: again.body)).marked == 0)
            #expect(try await client.send(.post, "/api/admin/notifications", body: #"{"title":"Dividends paid","body":"See your history."}"#, token: admin).status == .created)
            #expect(try await unread(member.token) == ["Dividends paid"])
            #expect(try await client.send(.post, "/api/notifications/read", body: "", token: nil).status == .unauthorized)
        }
    }

    @Test("admin funds add or take cash as an adjustment, never below zero")
    func adminFunds() async throws {
        try await TestApp.run { client in
            let admin = try await client.adminToken()
            let player = try await client.register("funded_player")
            let add = try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"250.50"}"#, token: admin)
            #expect(String(buffer: add.body) == #"{"cash":"10250.50"}"#)
            let take = try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":-250.5}"#, token: admin)
            #expect(String(buffer: take.body) == #"{"cash":"10000.00"}"#)
            let tooMuch = try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"-10000.01"}"#, token: admin)
            #expect(tooMuch.status == .unprocessableContent)
            #expect(try await client.send(.post, "/api/admin/users/999999/funds", body: #"{"amount":"1"}"#, token: admin).status == .notFound)
            #expect(try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"0"}"#, token: admin).status == .unprocessableContent)
            #expect(try await client.send(.post, "/api/admin/users/\(player.user.id)/funds", body: #"{"amount":"5"}"#, token: player.token).status == .forbidden)
            let movements = try await client.decode(CashMovementPageBody.self, "/api/cash-movements", token: player.token)
            #expect(movements.items.map(\.kind) == ["adjustment", "adjustment", "starting_cash"])
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: player.token).cash == "10000.00")
        }
    }
}
