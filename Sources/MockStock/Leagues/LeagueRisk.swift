import Foundation
import Postgres

/// How a league's standings are ordered: by net worth (the default), return, Sharpe or
/// Sortino ratio (best first), or maximum drawdown (smallest first).
enum RankBy: String, Codable, Sendable, PostgresCodable {
    case netWorth, `return`, sharpe, sortino, drawdown

    static func parse(_ text: String?) throws -> RankBy? {
        guard let text else { return nil }
        guard let order = RankBy(rawValue: text) else {
            throw InvalidInput("rankBy must be netWorth, return, sharpe, sortino or drawdown.")
        }
        return order
    }

    /// The order of a standing (row `s`, risk figures `r`), best first; nil for net worth,
    /// which is the standings' own place. A ratio left undefined ranks by its mean
    /// return's sign (`ratio_rank`).
    var key: String? {
        switch self {
        case .netWorth: nil
        case .return: "return_percent(s.net_worth, s.paid_in) DESC"
        case .sharpe: "ratio_rank(r.sharpe, r.days, r.mean_return) DESC NULLS LAST"
        case .sortino: "ratio_rank(r.sortino, r.days, r.mean_return) DESC NULLS LAST"
        case .drawdown: "r.max_drawdown ASC NULLS LAST"
        }
    }

    /// A standing's rank in this order over the rows ranked (ties share one); nil for net
    /// worth, whose rank the standings keep.
    var rank: String? { key.map { "rank() OVER (ORDER BY \($0))" } }
}

/// Each member's risk figures over the league's days (from its start, or from when the
/// member's league portfolio was opened, to now) against the league's benchmark, by the
/// rules of `Risk` and `Returns` over the member's value history: the same figures
/// `GET /api/portfolios/{id}/risk` gives for that range (beta aside). Kept in
/// `league_risk` for the standings to show and rank by, and computed in the background,
/// a league at a time: a process claims a running league whose figures are older than
/// the interval (a minute; a quarter of an hour for a league ranked from snapshots) by a
/// conditional update of its `risk_computed_at`, so several processes never compute the
/// same league at once, and a process stopped midway leaves the previous figures.
struct LeagueRiskService: Sendable {
    let pool: PostgresConnectionPool
    let history: ValueHistoryService
    let benchmarks: BenchmarkStore
    /// Leagues with more members than this are ranked from snapshots and refreshed less often.
    let liveLimit: Int

    /// Computes the figures of the leagues that are due, a few at a time; returns which.
    @discardableResult
    func refreshDue(small: Duration = .seconds(60), big: Duration = .seconds(900), most: Int = 10) async throws -> [Int] {
        var computed: [Int] = []
        while computed.count < most, let league = try await claim(small: small, big: big) {
            try await compute(leagueID: league.id, benchmark: league.benchmark, from: league.startsAt, market: league.market)
            computed.append(league.id)
        }
        return computed
    }

    private func claim(small: Duration, big: Duration) async throws -> (id: Int, benchmark: String, startsAt: Date, market: Int?)? {
        try await pool.query(
            """
            UPDATE leagues SET risk_computed_at = now()
            WHERE id = (
                SELECT id FROM leagues
                WHERE league_running(leagues, now())
                  AND (risk_computed_at IS NULL
                       OR risk_computed_at < now() - make_interval(secs => CASE WHEN member_count > \(liveLimit)
                                                                              THEN \(big.inSeconds) ELSE \(small.inSeconds) END))
                ORDER BY risk_computed_at NULLS FIRST LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            RETURNING id, benchmark, starts_at, (SELECT m.league_id FROM league_markets m WHERE m.league_id = leagues.id)
            """
        ).decode((Int, String, Date, Int?).self).first.map { (id: $0.0, benchmark: $0.1, startsAt: $0.2, market: $0.3) }
    }

    /// Computes and stores every member's figures; members who left lose theirs.
    /// `market`: a scenario league's own (its `market` benchmark is its instruments').
    func compute(leagueID: Int, benchmark: String, from start: Date, market: Int? = nil) async throws {
        let members = try await pool.query(
            "SELECT user_id, portfolio_id FROM league_portfolios(\(leagueID)) WHERE NOT archived"
        ).decode((Int, Int).self)
        let first = history.clock.day(of: start)
        var benchmarkReturns: [String: Decimal?] = [:]
        var rows: [(userID: Int, days: Int, figures: Risk.Figures, excess: Decimal?)] = []
        for (userID, portfolioID) in members {
            let values: [ValueHistoryService.Value]
            do {
                values = try await history.values(userID: userID, portfolioID: portfolioID, from: first, to: nil, interval: .day).values
            } catch TradingError.noSuchPortfolio {
                continue  // reset or left meanwhile: the next round has the new one
            }
            let returns = Returns.daily(values)
            let figures = Risk.figures(returns.map { ($0.day, NSDecimalNumber(decimal: $0.r).doubleValue) }, benchmark: nil)
            var excess: Decimal?
            if returns.count >= 2, let twr = Returns.timeWeighted(values), let from = values.first?.day, let to = values.last?.day {
                let range = "\(from)|\(to)"
                if benchmarkReturns[range] == nil {
                    benchmarkReturns[range] = .some(try await benchmarks.totalReturn(benchmark, from: from, to: to, market: market))
                }
                excess = benchmarkReturns[range]!.map { twr - $0 }
            }
            rows.append((userID, returns.count, figures, excess))
        }
        try await pool.withTransaction { session in
            for row in rows {
                let figures = row.figures
                try await session.execute(
                    """
                    INSERT INTO league_risk (league_id, user_id, days, sharpe, sortino, max_drawdown, excess_return, mean_return)
                    SELECT \(leagueID), \(row.userID), \(row.days), \(Self.number(figures.sharpe))::numeric,
                           \(Self.number(figures.sortino))::numeric, \(Self.number(figures.maxDrawdown))::numeric,
                           \(row.excess?.rounded(6))::numeric, \(figures.mean)::float8
                    -- A member erased since the figures were computed has none.
                    WHERE EXISTS (SELECT 1 FROM users WHERE id = \(row.userID))
                    ON CONFLICT (league_id, user_id) DO UPDATE SET
                        days = excluded.days, sharpe = excluded.sharpe, sortino = excluded.sortino,
                        max_drawdown = excluded.max_drawdown, excess_return = excluded.excess_return,
                        mean_return = excluded.mean_return
                    """
                )
            }
            try await session.execute(
                "DELETE FROM league_risk WHERE league_id = \(leagueID) AND NOT (user_id = ANY(\(rows.map(\.userID))))"
            )
        }
    }

    /// A figure as stored: six places, as `GET /api/portfolios/{id}/risk` shows it.
    private static func number(_ value: Double?) -> Decimal? {
        Risk.text(value).flatMap { Decimal(string: $0) }
    }
}
