import Foundation
import HTTPTypes
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

@Suite("Net worth")
struct NetWorthTests {
    private struct Worth: Decodable {
        let netWorth: String
        let holdingsValue: String
    }

    @Test("one net worth everywhere (SQL net_worth): the portfolio, the league's standings, today's point of the value history and the composition say the same")
    func oneNetWorth() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("worth_host")
                let player = try await client.register("worth_player")
                let league = try await client.createLeague(#"{"name":"Worth"}"#, token: host.token)
                #expect(try await client.join(league.code, token: player.token).status == .ok)
                _ = try await client.tradeOK("buy", "AAPL", 7, token: player.token)
                try await client.setPrice("AAPL", "161.37")
                let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: player.token)
                let id = try #require(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: player.token)
                    .first { $0.leagueId == nil }?.id)
                let standing = try #require(try await client.decode(StandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: player.token)
                    .items.first { $0.username == "worth_player" })
                let history = try await client.decode(ValueHistoryBody.self, "/api/portfolios/\(id)/history", token: player.token)
                let composition = try await client.decode(Worth.self, "/api/portfolios/\(id)/composition", token: player.token)
                // 7 × 161.37 = 1,129.59 in AAPL, the rest in cash.
                #expect(portfolio.holdingsValue == "1129.59")
                let worth = portfolio.netWorth
                #expect([standing.netWorth, history.points.last?.netWorth, composition.netWorth] == [worth, worth, worth])
                #expect([standing.holdingsValue, history.points.last?.holdingsValue, composition.holdingsValue] == ["1129.59", "1129.59", "1129.59"])
            }
            try await database.withPool { pool in
                let byHand = try await pool.query("SELECT net_worth(100.25, NULL), net_worth(100.25, 50.5), net_worth(0, -20)")
                    .decode((Decimal, Decimal, Decimal).self)
                #expect(byHand.count == 1 && byHand[0] == (Decimal(string: "100.25")!, Decimal(string: "150.75")!, -20), "no holdings, some, a short")
            }
        }
    }
}
