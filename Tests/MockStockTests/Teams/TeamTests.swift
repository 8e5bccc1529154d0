import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct TeamBody: Decodable {
    struct Member: Decodable, Equatable {
        let userId: Int
        let username: String
        let role: String
    }

    let id: Int
    let name: String
    let portfolioId: Int
    let members: [Member]
}

extension TestClientProtocol {
    func team(_ leagueID: Int, _ name: String, token: String) async throws -> TeamBody {
        let response = try await send(.post, "/api/leagues/\(leagueID)/teams", body: #"{"name":"\#(name)"}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(TeamBody.self, from: Data(buffer: response.body))
    }

    func seat(_ userID: Int, on team: Int, in leagueID: Int, as role: String, token: String) async throws -> TestResponse {
        try await send(.put, "/api/leagues/\(leagueID)/teams/\(team)/members/\(userID)", body: #"{"role":"\#(role)"}"#, token: token)
    }
}

@Suite("Teams")
struct TeamTests {
    @Test("a team league: the host makes teams and seats members; traders trade the team's one portfolio, viewers watch it, every trade says who placed it, the standings rank teams")
    func teamLeague() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let host = try await client.register("team_host")
            let shared = try await client.send(.post, "/api/leagues/create", body: #"{"name":"Shared teams","teams":true}"#, token: host.token)
            #expect(shared.status == .unprocessableContent)
            let league = try await client.hostedLeague(#","ownerPlays":false,"teams":true"#, token: host.token)
            var students: [SessionBody] = []
            for name in ["ava", "ben", "cal", "dee"] {
                let student = try await client.register("team_\(name)")
                #expect(try await client.join(league.code, token: student.token).status == .ok)
                // A team league's seat comes with no portfolio of one's own.
                #expect(try await client.leaguePortfolio(league.id, token: student.token) == nil)
                students.append(student)
            }
            let (ava, ben, cal, dee) = (students[0], students[1], students[2], students[3])
            let bulls = try await client.team(league.id, "Bulls", token: host.token)
            let bears = try await client.team(league.id, "Bears", token: host.token)
            let taken = try await client.send(.post, "/api/leagues/\(league.id)/teams", body: #"{"name":"bulls"}"#, token: host.token)
            #expect(taken.status == .conflict)
            #expect(try await client.send(.post, "/api/leagues/\(league.id)/teams", body: #"{"name":"Mine"}"#, token: ava.token).status == .forbidden)

            #expect(try await client.seat(ava.user.id, on: bulls.id, in: league.id, as: "trader", token: host.token).status == .ok)
            #expect(try await client.seat(ben.user.id, on: bulls.id, in: league.id, as: "viewer", token: host.token).status == .ok)
            #expect(try await client.seat(cal.user.id, on: bulls.id, in: league.id, as: "trader", token: host.token).status == .ok)
            // Moved to the other team.
            let moved = try await client.seat(cal.user.id, on: bears.id, in: league.id, as: "trader", token: host.token)
            #expect(try JSONDecoder().decode(TeamBody.self, from: Data(buffer: moved.body)).members.map(\.username) == ["team_cal"])
            let stranger = try await client.register("team_stranger")
            #expect(try await client.seat(stranger.user.id, on: bulls.id, in: league.id, as: "trader", token: host.token).status == .notFound)
            #expect(try await client.seat(ava.user.id, on: 999_999, in: league.id, as: "trader", token: host.token).status == .notFound)
            #expect(try await client.seat(dee.user.id, on: bulls.id, in: league.id, as: "captain", token: host.token).status == .unprocessableContent)
            let listed = try await client.decode([TeamBody].self, "/api/leagues/\(league.id)/teams", token: dee.token)
            #expect(listed.map(\.name) == ["Bears", "Bulls"])
            #expect(listed[1].members == [.init(userId: ava.user.id, username: "team_ava", role: "trader"),
                                          .init(userId: ben.user.id, username: "team_ben", role: "viewer")])

            // Traders trade the team's portfolio; a viewer sees it and may not; others do not see it.
            let bought = try await client.trade("buy", #"{"symbol":"AAPL","amount":10,"portfolioId":\#(bulls.portfolioId)}"#, token: ava.token)
            #expect(bought.status == .ok, "\(String(buffer: bought.body))")
            let trade = try #require(try JSONSerialization.jsonObject(with: Data(buffer: bought.body)) as? [String: Any])["trade"] as? [String: Any]
            #expect(trade?["placedBy"] as? Int == ava.user.id)
            // A trader's trade under an Idempotency-Key fills once; the key answers it again.
            let keyed = #"{"symbol":"ONE","amount":2,"portfolioId":\#(bulls.portfolioId)}"#
            let first = try await client.trade("buy", keyed, token: ava.token, key: "team-key-1")
            let again = try await client.trade("buy", keyed, token: ava.token, key: "team-key-1")
            #expect(first.status == .ok && again.status == .ok, "\(String(buffer: first.body))")
            let firstTrade = try JSONDecoder().decode(TradeResultBody.self, from: Data(buffer: first.body)).trade.id
            #expect(try JSONDecoder().decode(TradeResultBody.self, from: Data(buffer: again.body)).trade.id == firstTrade)
            // A plain trade is an order that is no longer open, to its traders; to its viewer, not theirs to cancel.
            #expect(client.problemCode(try await client.delete("/api/orders/\(firstTrade)", token: ava.token)) == "order_not_open")
            #expect(client.problemCode(try await client.delete("/api/orders/\(firstTrade)", token: ben.token)) == "not_a_trader")
            let own = try await client.tradeOK("buy", "ONE", 1, token: dee.token)
            #expect(client.problemCode(try await client.delete("/api/orders/\(own.trade.id)", token: dee.token)) == "order_not_open")
            let viewer = try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(bulls.portfolioId)}"#, token: ben.token)
            #expect(viewer.status == .forbidden && client.problemCode(viewer) == "not_a_trader")
            #expect(try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(bulls.portfolioId)}"#, token: cal.token).status == .notFound)
            #expect(try await client.trade("buy", #"{"symbol":"AAPL","amount":1,"portfolioId":\#(bulls.portfolioId)}"#, token: dee.token).status == .notFound)
            let order = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"1.00","portfolioId":\#(bulls.portfolioId)}"#, token: ava.token)
            let viewerOrder = try await client.send(.post, "/api/orders",
                                                    body: #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"1.00","portfolioId":\#(bulls.portfolioId)}"#,
                                                    token: ben.token)
            #expect(viewerOrder.status == .forbidden && client.problemCode(viewerOrder) == "not_a_trader")
            let seen = try await client.get("/api/orders/\(order.id)", token: ben.token)
            let seenOrder = try JSONSerialization.jsonObject(with: Data(buffer: seen.body)) as? [String: Any]
            #expect(seen.status == .ok && seenOrder?["placedBy"] as? Int == ava.user.id)
            let viewerReplace = try await client.send(.patch, "/api/orders/\(order.id)", body: #"{"quantity":2}"#, token: ben.token)
            #expect(viewerReplace.status == .forbidden && client.problemCode(viewerReplace) == "not_a_trader", "\(String(buffer: viewerReplace.body))")
            let replaced = try await client.send(.patch, "/api/orders/\(order.id)", body: #"{"quantity":2}"#, token: ava.token)
            #expect(replaced.status == .ok, "\(String(buffer: replaced.body))")
            let newOrder = try #require(try JSONSerialization.jsonObject(with: Data(buffer: replaced.body)) as? [String: Any])["id"] as? Int
            let viewerCancel = try await client.delete("/api/orders/\(newOrder ?? 0)", token: ben.token)
            #expect(viewerCancel.status == .forbidden && client.problemCode(viewerCancel) == "not_a_trader")
            let viewerCancelAll = try await client.delete("/api/orders?portfolioId=\(bulls.portfolioId)", token: ben.token)
            #expect(viewerCancelAll.status == .forbidden && client.problemCode(viewerCancelAll) == "not_a_trader")
            #expect(try await client.delete("/api/orders/\(newOrder ?? 0)", token: ava.token).status == .ok)
            // Closed now: still no viewer's to replace.
            let closedReplace = try await client.send(.patch, "/api/orders/\(newOrder ?? 0)", body: #"{"quantity":3}"#, token: ben.token)
            #expect(closedReplace.status == .forbidden && client.problemCode(closedReplace) == "not_a_trader")
            #expect(client.problemCode(try await client.send(.patch, "/api/orders/\(newOrder ?? 0)", body: #"{"quantity":3}"#, token: ava.token)) == "order_not_open")
            let benSees = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: ben.token)
            #expect(benSees.contains { $0.id == bulls.portfolioId })
            #expect(try await client.get("/api/portfolio?portfolioId=\(bulls.portfolioId)", token: ben.token).status == .ok)
            #expect(try await client.get("/api/portfolio?portfolioId=\(bulls.portfolioId)", token: dee.token).status == .notFound)
            // Bears' trader buys too: the teams are ranked, with their members.
            _ = try await client.tradeOK("buy", "ONE", 5, token: cal.token, portfolioID: bears.portfolioId)
            try await client.setPrice("AAPL", "160.00")
            let board = try await client.get("/api/leagues/\(league.id)/leaderboard", token: dee.token)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(buffer: board.body)) as? [String: Any])["items"] as? [[String: Any]] ?? []
            #expect(items.map { $0["teamName"] as? String } == ["Bulls", "Bears"])
            #expect(items[0]["members"] as? [String] == ["team_ava", "team_ben"] && items[0]["userId"] is NSNull && items[0]["username"] is NSNull)
            #expect(items[0]["netWorth"] as? String == "10100.00")

            // The host's page lists every student with their team, role and own trades.
            let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/leagues/\(league.id)", token: host.token).body)) as? [String: Any])
            let roster = Dictionary(uniqueKeysWithValues: (page["students"] as? [[String: Any]] ?? []).map { ($0["username"] as? String ?? "", $0) })
            #expect(roster.count == 4 && roster["team_ava"]?["teamId"] as? Int == bulls.id && roster["team_ava"]?["role"] as? String == "trader")
            #expect(roster["team_ava"]?["trades"] as? Int == 2 && roster["team_ben"]?["role"] as? String == "viewer" && roster["team_dee"]?["teamId"] is NSNull)
            let avaPage = try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/leagues/\(league.id)", token: ava.token).body)) as? [String: Any]
            #expect(avaPage != nil && avaPage?["students"] == nil)
            // The gradebook: one row per student, the team's money and rank, the student's own trades.
            let csv = String(buffer: try await client.get("/api/leagues/\(league.id)/report.csv", token: host.token).body)
            let lines = csv.split(separator: "\r\n").map(String.init)
            #expect(lines.first == "rank,username,team,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt")
            #expect(lines.count == 5, "\(lines)")
            #expect(lines[1].hasPrefix("1,team_ava,Bulls,10100.00,1.00,,,,,2,0,0,") && lines[2].hasPrefix("1,team_ben,Bulls,10100.00,1.00,,,,,0,0,0,"), "\(lines)")
            #expect(lines[3].hasPrefix("2,team_cal,Bears,") && lines[4].hasPrefix(",team_dee,,,,,,,,0,0,0,"), "\(lines)")

            // No member's portfolio is reset in a team league; taking a member off.
            let reset = try await client.send(.post, "/api/leagues/\(league.id)/reset", body: "", token: ava.token)
            #expect(reset.status == .conflict && client.problemCode(reset) == "team_league")
            let off = try await client.delete("/api/leagues/\(league.id)/teams/\(bulls.id)/members/\(ben.user.id)", token: host.token)
            let offTeam = try JSONDecoder().decode(TeamBody.self, from: Data(buffer: off.body))
            #expect(off.status == .ok && offTeam.members.map(\.username) == ["team_ava"])
            #expect(try await client.get("/api/portfolio?portfolioId=\(bulls.portfolioId)", token: ben.token).status == .notFound)
            let log = try await client.audit("/api/leagues/\(league.id)/audit", token: host.token).items.map(\.action)
            #expect(log.filter { $0 == "league.team_create" }.count == 2 && log.filter { $0 == "league.team_member" }.count == 5)
        }
    }

    @Test("erasing a team's trader keeps the team's portfolio and trades whole; who placed them becomes unknown")
    func erasingATrader() async throws {
        try await TemporaryDatabase.with { database in
            let (portfolio, tradeID) = try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("erase_team_host")
                let league = try await client.hostedLeague(#","ownerPlays":false,"teams":true"#, token: host.token)
                let created = try await client.roster(league.id, ["Eve", "Fay"], token: host.token)
                let students = try JSONDecoder().decode(RosterBody.self, from: Data(buffer: created.body)).students
                let team = try await client.team(league.id, "Owls", token: host.token)
                for student in students {
                    #expect(try await client.seat(student.userId, on: team.id, in: league.id, as: "trader", token: host.token).status == .ok)
                }
                let eve = try client.token(try await client.login(students[0].username, password: students[0].password))
                let traded = try await client.tradeOK("buy", "AAPL", 10, token: eve, portfolioID: team.portfolioId)
                // Her export holds the team's trade she placed, and her team and role.
                let export = try #require(try JSONSerialization.jsonObject(with: Data(buffer: try await client.get("/api/me/export", token: eve).body)) as? [String: Any])
                #expect((export["teamTrades"] as? [[String: Any]])?.map { $0["id"] as? Int } == [traded.trade.id])
                #expect((export["leagues"] as? [[String: Any]])?.first?["team"] as? String == "Owls")
                #expect(try await client.delete("/api/leagues/\(league.id)/members/\(students[0].userId)/account", token: host.token).status == .noContent)
                let fay = try client.token(try await client.login(students[1].username, password: students[1].password))
                let after = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(team.portfolioId)", token: fay)
                #expect(after.cash == "8500.00" && after.holdings.map(\.quantity) == [10])
                return (team.portfolioId, traded.trade.id)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let rows = try await pool.query("SELECT portfolio_id, placed_by FROM trades WHERE id = \(tradeID)").decode((Int, Int?).self)
            await pool.close()
            #expect(rows.count == 1 && rows[0].0 == portfolio && rows[0].1 == nil)
        }
    }

    @Test("a member whose seat goes while they replace a team's order is told the order is not theirs (404), never that they watch it")
    func seatGoneMidReplace() async throws {
        try await TemporaryDatabase.with { database in
            let (orderID, ids) = try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("gone_team_host")
                let league = try await client.hostedLeague(#","ownerPlays":false,"teams":true"#, token: host.token)
                var members: [SessionBody] = []
                for name in ["ada", "bo", "cy"] {
                    let member = try await client.register("gone_\(name)")
                    #expect(try await client.join(league.code, token: member.token).status == .ok)
                    members.append(member)
                }
                let team = try await client.team(league.id, "Owls", token: host.token)
                for (member, role) in zip(members, ["trader", "trader", "viewer"]) {
                    #expect(try await client.seat(member.user.id, on: team.id, in: league.id, as: role, token: host.token).status == .ok)
                }
                let order = try await client.placeOrderOK(
                    #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"1.00","portfolioId":\#(team.portfolioId)}"#,
                    token: members[0].token)
                // Bo leaves the team: over HTTP the order is no longer his to see, replace or cancel.
                #expect(try await client.delete("/api/leagues/\(league.id)/teams/\(team.id)/members/\(members[1].user.id)", token: host.token).status == .ok)
                let replace = try await client.send(.patch, "/api/orders/\(order.id)", body: #"{"quantity":2}"#, token: members[1].token)
                #expect(replace.status == .notFound && client.problemCode(replace) == "not_found")
                let cancel = try await client.delete("/api/orders/\(order.id)", token: members[1].token)
                #expect(cancel.status == .notFound && client.problemCode(cancel) == "not_found")
                return (order.id, members.map(\.user.id))
            }
            // The race: Bo's replacement looked the order up while he still traded for the team,
            // and reaches the store after his seat went. He is told it is not his; Cy, the
            // viewer, that he watches it; the order stays open as it was.
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = OrderStore(pool: pool)
            let old = try #require(try await store.order(userID: ids[0], id: orderID))
            let ticket = try OrderTicket(replacing: old, with: try JSONDecoder().decode(OrderChanges.self, from: Data(#"{"quantity":2}"#.utf8)))
            for (member, expected) in [(ids[1], TradingError.noSuchOrder), (ids[2], TradingError.notATrader)] {
                await #expect(throws: expected) {
                    _ = try await store.replace(orderID, with: ticket, userID: member, reservation: .init(cash: 2, shares: 0), expiresAt: nil)
                }
            }
            let status = try await pool.query("SELECT status, quantity FROM orders WHERE id = \(orderID)").decode((String, Int).self)
            await pool.close()
            #expect(status.count == 1 && status[0].0 == "new" && status[0].1 == 1)
        }
    }
}
