import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

@Suite("The trade gate")
struct TradeGateTests {
    @Test("the trade gate by hand (SQL trade_gate): a frozen league before a closed one, a missing note, a key on a league that forbids keys; a portfolio without a league always trades")
    func tradeGate() async throws {
        try await TemporaryDatabase.with { database in
            let (personal, league, portfolio) = try await TestApp.run(on: database) { client in
                let host = try await client.register("gate_host")
                let member = try await client.register("gate_member")
                let league = try await client.createLeague(#"{"name":"Gate","mode":"isolated"}"#, token: host.token)
                #expect(try await client.join(league.code, token: member.token).status == .ok)
                let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: member.token)
                let personal = try #require(portfolios.first { $0.leagueId == nil }?.id)
                let leagues = try #require(portfolios.first { $0.leagueId == league.id }?.id)
                return (personal, league.id, leagues)
            }
            try await database.withPool { pool in
                /// The gate of the league portfolio: (noted, by key) for each of the four combinations.
                func gate(_ portfolioID: Int) async throws -> [String] {
                    try await pool.query(
                        """
                        SELECT trade_gate(l, now(), c.noted, c.by_key AND api_keys_forbidden(p.id))
                        FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id,
                             (VALUES (1, true, false), (2, false, false), (3, true, true), (4, false, true)) c (i, noted, by_key)
                        WHERE p.id = \(portfolioID) ORDER BY c.i
                        """
                    ).decodeColumn(String.self)
                }
                #expect(try await gate(portfolio) == ["ok", "ok", "ok", "ok"])
                try await pool.execute("UPDATE leagues SET journal_required = true, bots = 'forbidden' WHERE id = \(league)")
                #expect(try await gate(portfolio) == ["ok", "note_required", "bots_forbidden", "note_required"])
                try await pool.execute("UPDATE leagues SET ends_at = now() - interval '1 second', starts_at = now() - interval '1 day' WHERE id = \(league)")
                #expect(try await gate(portfolio) == ["closed", "closed", "closed", "closed"])
                try await pool.execute("UPDATE leagues SET frozen_at = now() WHERE id = \(league)")
                #expect(try await gate(portfolio) == ["frozen", "frozen", "frozen", "frozen"])
                // The personal portfolio has no league of its own: the isolated league's rules do not reach it.
                #expect(try await gate(personal) == ["ok", "ok", "ok", "ok"])
            }
        }
    }

    @Test("a trade and an order meet the same gate and the same refusal: frozen is 409 trading_frozen, a missing note 422 note_required, for both")
    func oneGateOneRefusal() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("refusal_host")
                let member = try await client.register("refusal_member")
                let league = try await client.createLeague(#"{"name":"Refusals","mode":"isolated"}"#, token: host.token)
                #expect(try await client.join(league.code, token: member.token).status == .ok)
                let portfolio = try #require(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: member.token)
                    .first { $0.leagueId == league.id }?.id)
                let trade = #"{"symbol":"AAPL","amount":1,"portfolioId":\#(portfolio)}"#
                let order = #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","timeInForce":"gtc","portfolioId":\#(portfolio)}"#
                func refusals() async throws -> [String?] {
                    let traded = try await client.post("/api/stock/buy", json: trade, token: member.token)
                    let placed = try await client.post("/api/orders", json: order, token: member.token)
                    return [try? decodeProblem(traded).code, try? decodeProblem(placed).code, String(buffer: traded.body), String(buffer: placed.body)]
                }
                try await database.withPool { pool in
                    try await pool.execute("UPDATE leagues SET journal_required = true WHERE id = \(league.id)")
                    let unnoted = try await refusals()
                    #expect(Array(unnoted.prefix(2)) == ["note_required", "note_required"], "\(unnoted)")
                    try await pool.execute("UPDATE leagues SET frozen_at = now(), frozen_reason = 'Test' WHERE id = \(league.id)")
                    let frozen = try await refusals()
                    #expect(Array(frozen.prefix(2)) == ["trading_frozen", "trading_frozen"], "\(frozen)")
                }
            }
        }
    }
}
