import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing
import TestSupport

struct JournalEntryBody: Decodable, Equatable {
    let userId: Int
    let username: String
    let orderId: Int
    let symbol: String
    let side: String
    let quantity: Int
    let note: String
    let createdAt: String
}

struct JournalPageBody: Decodable {
    let items: [JournalEntryBody]
    let nextBefore: Int?
}

@Suite("Trade journal")
struct JournalTests {
    @Test("a league that asks for notes refuses trades and orders without one (not /v2); notes show on orders and trades and in the journal")
    func journalRequired() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("journal_host")
            let league = try await client.hostedLeague(#","ownerPlays":false,"journalRequired":true"#, token: host.token)
            let student = try await client.register("journal_student")
            #expect(try await client.join(league.code, token: student.token).status == .ok)
            let portfolio = try #require(try await client.leaguePortfolio(league.id, token: student.token))

            let bare = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(portfolio)}"#, token: student.token)
            #expect(bare.status == .unprocessableContent && client.problemCode(bare) == "note_required")
            let blank = try await client.placeOrder(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"120","note":"   ","portfolioId":\#(portfolio)}"#,
                token: student.token)
            #expect(blank.status == .unprocessableContent && client.problemCode(blank) == "note_required")
            let untouched = try await client.decode(ReservedPortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: student.token)
            #expect(untouched.cash == "10000.00" && untouched.reserved == "0.00", "nothing was bought or held back")

            let traded = try await client.trade("buy", #"{"symbol":"AAPL","amount":2,"note":"Earnings beat","portfolioId":\#(portfolio)}"#,
                                                token: student.token)
            #expect(traded.status == .ok, "\(String(buffer: traded.body))")
            let resting = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"160","timeInForce":"gtc","note":"Take profit\nat 160","portfolioId":\#(portfolio)}"#,
                token: student.token)
            #expect(try await client.order(resting.id, token: student.token).note == "Take profit\nat 160")
            try await client.setPrice("AAPL", "161")
            #expect(try await client.order(resting.id, token: student.token).status == "filled")
            let trades = try await client.decode(TradePageBody.self, "/api/transactions?portfolioId=\(portfolio)", token: student.token).items
            #expect(trades.map(\.note) == ["Take profit\nat 160", "Earnings beat"], "a fill keeps its order's note")

            // A bot's order through /v2 needs no note; a note of more than 500 characters is refused.
            let key = try await client.apiKey(token: student.token, portfolioID: portfolio)
            let bot = try await client.alpaca(.post, "/v2/orders", key: key,
                                              body: #"{"symbol":"AAPL","qty":"1","side":"buy","type":"market","time_in_force":"day"}"#)
            #expect(bot.status == .ok, "\(String(buffer: bot.body))")
            let long = String(repeating: "x", count: 501)
            let tooLong = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"note":"\#(long)","portfolioId":\#(portfolio)}"#, token: student.token)
            #expect(tooLong.status == .unprocessableContent && client.problemCode(tooLong) == "validation_failed")

            // The journal: the host reads everyone's, newest first, a page at a time; a member their own.
            let journal = try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal", token: host.token)
            #expect(journal.items.map(\.note) == ["Take profit\nat 160", "Earnings beat"])
            #expect(journal.items.allSatisfy { $0.username == "journal_student" && $0.symbol == "AAPL" })
            #expect(journal.items.map(\.side) == ["sell", "buy"] && journal.items.map(\.quantity) == [1, 2])
            let first = try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal?limit=1", token: host.token)
            #expect(first.items.count == 1 && first.nextBefore == first.items[0].orderId)
            let second = try await client.decode(JournalPageBody.self,
                                                 "/api/leagues/\(league.id)/journal?limit=1&before=\(first.nextBefore ?? 0)", token: host.token)
            #expect(second.items.map(\.note) == ["Earnings beat"])
            let own = try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal", token: student.token)
            #expect(own.items.count == 2)
            let other = try await client.register("journal_other")
            #expect(try await client.join(league.code, token: other.token).status == .ok)
            #expect(try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal", token: other.token).items.isEmpty)
            #expect(try await client.get("/api/leagues/\(league.id)/journal?userId=\(student.user.id)", token: other.token).status == .forbidden)
            #expect(try await client.get("/api/leagues/\(league.id)/journal", token: try await client.register("journal_stranger").token).status == .notFound)

            // The host lifts the rule: trades without notes are taken again.
            #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"journalRequired":false}"#, token: host.token).status == .ok)
            #expect(try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(portfolio)}"#, token: student.token).status == .ok)
            // A shared league cannot ask for notes: its members trade their personal portfolios.
            let shared = try await client.send(.post, "/api/leagues/create", body: #"{"name":"S","journalRequired":true}"#, token: host.token)
            #expect(shared.status == .unprocessableContent)
        }
    }

    @Test("a shared league's journal holds a member's notes from their join on, not the personal ones written before")
    func sharedLeagueJournalSinceJoin() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("shared_journal_host")
            let member = try await client.register("shared_journal_member")
            _ = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"note":"My own reasons, before any league"}"#, token: member.token)
            let league = try await client.createLeague(#"{"name":"Shared journal"}"#, token: host.token)
            #expect(try await client.join(league.code, token: member.token).status == .ok)
            var page = try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal", token: host.token)
            #expect(page.items.isEmpty)
            _ = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"note":"For the league"}"#, token: member.token)
            page = try await client.decode(JournalPageBody.self, "/api/leagues/\(league.id)/journal", token: host.token)
            #expect(page.items.map(\.note) == ["For the league"])
            // The gradebook counts the same: one trade and one note since the join.
            let csv = String(buffer: try await client.get("/api/leagues/\(league.id)/report.csv", token: host.token).body)
            let row = try #require(csv.split(separator: "\r\n").first { $0.contains(",shared_journal_member,") })
            #expect(row.split(separator: ",", omittingEmptySubsequences: false)[8...9].map(String.init) == ["1", "1"], "\(row)")
        }
    }
}
