import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct RiskStandingBody: Decodable {
    let rank: Int
    let username: String
    let netWorth: String
    let sharpe: String?
    let sortino: String?
    let maxDrawdown: String?
    let excessReturn: String?
}

struct RiskStandingPageBody: Decodable {
    let items: [RiskStandingBody]
    let total: Int
}

@Suite("Risk-adjusted standings")
struct RiskStandingsTests {
    @Test("standings show each member's risk over the league's days against its benchmark, and rank by return, Sharpe, Sortino or drawdown")
    func riskStandings() async throws {
        // The worked week of RiskTests, as a league: on Friday evening, "bold" has held
        // 10 AAL since Monday (its Sharpe −1.509009, Sortino −2.244994, drawdown 14.14 %,
        // −5.554 % against MSFT's −3 %) and "steady" has held cash (no Sharpe: its returns
        // never vary; no drawdown; +3 % against MSFT).
        let clock = MovableDate("2018-01-12T22:00:00Z")
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            try await TestApp.run(on: database, configure: {
                $0.clock = clock.reader
                $0.standings.riskCheckInterval = .milliseconds(100)
                $0.standings.riskInterval = .milliseconds(100)
            }) { client in
                let admin = try await client.seedMarket()
                #expect(try await client.send(.post, "/api/admin/prices", body: RiskFixture.csv, contentType: "text/csv", token: admin).status == .ok)
                try await client.setPrice("AAL", "100")
                let host = try await client.register("risk_host")
                let created = try await client.send(.post, "/api/leagues/create", body: """
                    {"name":"Week","mode":"isolated","startingCash":"1000","ownerPlays":false,"startsAt":"2018-01-08T14:00:00Z","benchmark":"msft"}
                    """, token: host.token)
                #expect(created.status == .created, "\(String(buffer: created.body))")
                let league = try JSONDecoder().decode(HostedLeagueBody.self, from: Data(buffer: created.body))
                let bold = try await client.register("bold")
                let steady = try await client.register("steady")
                for member in [bold, steady] { #expect(try await client.join(league.code, token: member.token).status == .ok) }
                let portfolio = try #require(try await client.leaguePortfolio(league.id, token: bold.token))
                _ = try await client.tradeOK("buy", "AAL", 10, token: bold.token, portfolioID: portfolio)
                // As if the league had run since Monday: its portfolios, their funding and the buy are dated then.
                try await pool.execute("UPDATE portfolios SET created_at = '2018-01-08T15:00:00Z' WHERE league_id = \(league.id)")
                try await pool.execute(
                    "UPDATE cash_movements SET created_at = '2018-01-08T15:00:00Z' WHERE portfolio_id IN (SELECT id FROM portfolios WHERE league_id = \(league.id))"
                )
                try await pool.execute("UPDATE trades SET created_at = '2018-01-08T20:00:00Z' WHERE portfolio_id = \(portfolio)")
                try await client.setPrice("AAL", "94.446")
                // Dating the history back behind the server's back leaves its counts as they were, so
                // end-of-day values the background figures kept before (or while) it was dated back
                // would still pass for current: they are dropped until the figures arrive.
                let forgetKeptValues: PostgresQuery =
                    "DELETE FROM portfolio_values WHERE portfolio_id IN (SELECT id FROM portfolios WHERE league_id = \(league.id))"
                try await pool.execute(forgetKeptValues)

                let path = "/api/leagues/\(league.id)/leaderboard"
                var board = try await client.decode(RiskStandingPageBody.self, path, token: host.token)
                // Computed in the background (every 100 ms here): the figures of Friday evening
                // arrive (within 30 s: a loaded machine runs every suite at once).
                for _ in 0..<300 where board.items.first(where: { $0.username == "bold" })?.sharpe != "-1.509009" {
                    try await Task.sleep(for: .milliseconds(100))
                    try await pool.execute(forgetKeptValues)
                    board = try await client.decode(RiskStandingPageBody.self, path, token: host.token)
                }
                #expect(board.items.map(\.username) == ["steady", "bold"], "by net worth: 1,000 against 944.46")
                let boldFigures = try #require(board.items.first { $0.username == "bold" })
                #expect(boldFigures.sharpe == "-1.509009" && boldFigures.sortino == "-2.244994", "\(board.items)")
                #expect(boldFigures.maxDrawdown == "0.141400" && boldFigures.excessReturn == "-0.025540")
                let steadyFigures = try #require(board.items.first { $0.username == "steady" })
                #expect(steadyFigures.sharpe == nil && steadyFigures.sortino == nil)
                #expect(steadyFigures.maxDrawdown == "0.000000" && steadyFigures.excessReturn == "0.030000")

                // Another order without changing the league's: the smallest drawdown first; by
                // Sharpe, cash held throughout (no ratio: its returns never vary) ranks as 0,
                // above a loss's negative ratio; return.
                let drawdown = try await client.decode(RiskStandingPageBody.self, "\(path)?rankBy=drawdown", token: host.token)
                #expect(drawdown.items.map(\.username) == ["steady", "bold"] && drawdown.items.map(\.rank) == [1, 2])
                let sharpe = try await client.decode(RiskStandingPageBody.self, "\(path)?rankBy=sharpe", token: host.token)
                #expect(sharpe.items.map(\.username) == ["steady", "bold"] && sharpe.total == 2)
                let page = try await client.decode(RiskStandingPageBody.self, "\(path)?rankBy=sharpe&limit=1&offset=1", token: host.token)
                #expect(page.items.map(\.username) == ["bold"] && page.items.first?.rank == 2)
                let sortino = try await client.decode(RiskStandingPageBody.self, "\(path)?rankBy=sortino", token: host.token)
                #expect(sortino.items.map(\.username) == ["steady", "bold"])
                let byReturn = try await client.decode(RiskStandingPageBody.self, "\(path)?rankBy=return", token: host.token)
                #expect(byReturn.items.map(\.username) == ["steady", "bold"])
                #expect(try await client.get("\(path)?rankBy=luck", token: host.token).status == .unprocessableContent)

                // The host ranks the league by Sharpe ratio: the default order follows.
                let changed = try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"rankBy":"sharpe"}"#, token: host.token)
                #expect(changed.status == .ok, "\(String(buffer: changed.body))")
                let shown = try await client.decode(RiskStandingPageBody.self, path, token: bold.token)
                #expect(shown.items.map(\.username) == ["steady", "bold"])
                #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"benchmark":"NOPE"}"#, token: host.token).status == .notFound)
                #expect(try await client.send(.patch, "/api/leagues/\(league.id)", body: #"{"rankBy":"luck"}"#, token: host.token).status == .unprocessableContent)
            }
            await pool.close()
        }
    }

    @Test("a big league's snapshot ranks by another order too, a page at a time, with its total")
    func snapshotOrders() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 2, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: StandingsTests.quietService(liveLimit: 2)) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("order_host")
                let league = try await client.hostedLeague(#","ownerPlays":false"#, token: host.token)
                // Three members: one buys AAPL that then falls, one that then rises, one holds cash.
                var players: [String: Int] = [:]
                for name in ["order_down", "order_up", "order_cash"] {
                    let member = try await client.register(name)
                    #expect(try await client.join(league.code, token: member.token).status == .ok)
                    players[name] = try #require(try await client.leaguePortfolio(league.id, token: member.token))
                    if name == "order_down" { _ = try await client.tradeOK("buy", "AAPL", 10, token: member.token, portfolioID: players[name]) }
                    if name == "order_up" {
                        try await client.setPrice("AAPL", "100.00")
                        _ = try await client.tradeOK("buy", "AAPL", 10, token: member.token, portfolioID: players[name])
                    }
                }
                try await client.setPrice("AAPL", "120.00")
                #expect(try await store.refreshSnapshots(maxAge: .zero) == [league.id])
                let path = "/api/leagues/\(league.id)/leaderboard?rankBy=return"
                // Bought at 150 and at 100, now 120: −300 and +200 on 10,000; cash 0.
                let all = try await client.decode(RiskStandingPageBody.self, path, token: host.token)
                #expect(all.items.map(\.username) == ["order_up", "order_cash", "order_down"] && all.items.map(\.rank) == [1, 2, 3] && all.total == 3)
                let second = try await client.decode(RiskStandingPageBody.self, "\(path)&limit=1&offset=1", token: host.token)
                #expect(second.items.map(\.username) == ["order_cash"] && second.items.first?.rank == 2 && second.total == 3)
                let past = try await client.decode(RiskStandingPageBody.self, "\(path)&offset=10", token: host.token)
                #expect(past.items.isEmpty && past.total == 3)
            }
            await pool.close()
        }
    }
}
