import Foundation
import Hummingbird
import Postgres

/// The gradebook: a league as a host downloads it (`GET /api/leagues/{id}/report.csv`),
/// one row per member in the league's order (`rankBy`), with the standing's figures and
/// what each member did: trades made and journal notes written in its portfolios since
/// they play there (`league_portfolios`, reset ones included), resets, and the last
/// trade's time.
struct Gradebook: Sendable {
    static let header = "rank,username,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt"

    let pool: PostgresConnectionPool
    let standings: StandingsStore

    struct Activity: Sendable {
        let trades: Int
        let notes: Int
        let lastTradeAt: Date?
    }

    func csv(of league: LeagueStore.LeagueRecord) async throws -> String {
        let activity = try await self.activity(of: league)
        let formatter = ISO8601DateFormatter()
        var lines = [Self.header]
        var offset = 0
        while true {
            let page = try await standings.page(of: league, players: .all, limit: 1000, offset: offset)
            for record in page.items {
                let standing = Standing(record)
                let done = activity[record.userID]
                lines.append([
                    String(standing.rank), Self.text(standing.username), standing.netWorth, standing.returnPercent,
                    standing.sharpe ?? "", standing.sortino ?? "", standing.maxDrawdown ?? "", standing.excessReturn ?? "",
                    String(done?.trades ?? 0), String(done?.notes ?? 0), String(standing.resets),
                    done?.lastTradeAt.map(formatter.string) ?? "",
                ].joined(separator: ","))
            }
            offset += page.items.count
            if page.items.isEmpty || offset >= page.total { break }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A text cell as a spreadsheet shows it: one that would start a formula (`=`, `+`,
    /// `-`, `@`; a username may start with `-`) is prefixed with `'`, so the teacher sees
    /// the name and no formula runs. Usernames hold no commas or quotes.
    static func text(_ value: String) -> String {
        guard let first = value.first, "=+-@".contains(first) else { return value }
        return "'" + value
    }

    /// Each member's trades, journal notes and last trade since their portfolio plays in the
    /// league (`league_portfolios.since`).
    private func activity(of league: LeagueStore.LeagueRecord) async throws -> [Int: Activity] {
        let rows = try await pool.query(
            """
            WITH lp AS (SELECT * FROM league_portfolios(\(league.id))),
            traded AS (
                SELECT lp.user_id, count(*) AS trades, max(t.created_at) AS last
                FROM lp JOIN trades t ON t.portfolio_id = lp.portfolio_id AND t.created_at >= lp.since
                GROUP BY lp.user_id
            ), noted AS (
                SELECT lp.user_id, count(*) AS notes
                FROM lp JOIN orders o ON o.portfolio_id = lp.portfolio_id AND o.note IS NOT NULL AND o.created_at >= lp.since
                GROUP BY lp.user_id
            )
            SELECT user_id, coalesce(traded.trades, 0), coalesce(noted.notes, 0), traded.last
            FROM traded FULL JOIN noted USING (user_id)
            """
        ).decode((Int, Int, Int, Date?).self)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, Activity(trades: $0.1, notes: $0.2, lastTradeAt: $0.3)) })
    }
}
