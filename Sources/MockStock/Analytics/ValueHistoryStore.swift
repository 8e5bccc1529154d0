import Foundation
import Postgres

/// A portfolio's value on past days, rebuilt from its history alone by SQL `portfolio_at`
/// (each held symbol at that day's close, in the portfolio's currency at that day's
/// reference rate). Days once computed are kept (`portfolio_values`, see its migration)
/// for as long as the history is unchanged.
struct ValueHistoryStore: Sendable {
    let pool: PostgresConnectionPool

    struct Day: Sendable {
        let day: String
        let cash: Decimal
        let holdingsValue: Decimal
        /// Everything paid in or taken out up to the end of the day.
        let inflowToDate: Decimal
        /// Cash and holdings together (SQL `net_worth`).
        let netWorth: Decimal
    }

    /// The currency the user's portfolio (nil: the personal one) is shown in by default.
    func baseCurrency(userID: Int, portfolioID: Int?) async throws -> String? {
        try await PortfolioAccess.resolving(userID: userID, portfolioID: portfolioID, run: pool.query) { holder in
            try await pool.query(
                """
                SELECT base_currency FROM portfolios
                WHERE user_id = \(holder)
                  AND portfolio_named(kind, id, \(portfolioID)::int8)
                """
            ).decodeColumn(String.self).first
        }
    }

    /// A scenario league portfolio's calendar: the dates of its league's days so far
    /// (`bar_days` up to the league's day now) and the one it was opened on
    /// (`league_day_of`); nil for a portfolio of the real market.
    func leagueCalendar(portfolioID: Int) async throws -> (days: [String], joined: String)? {
        try await pool.query(
            """
            SELECT array_to_string(m.bar_days[1:m.day], ','), league_day_of(m, p.created_at)::text
            FROM portfolios p JOIN league_markets m ON m.league_id = p.league_id WHERE p.id = \(portfolioID)
            """
        ).decode((String, String).self).first.map { (days: $0.0.split(separator: ",").map(String.init), joined: $0.1) }
    }

    func createdAt(portfolioID: Int) async throws -> Date? {
        try await pool.query("SELECT created_at FROM portfolios WHERE id = \(portfolioID)").decodeColumn(Date.self).first
    }

    /// The portfolio at the end of each of `days` (`YYYY-MM-DD`, ascending), counting
    /// activities in the market's time zone `timeZone`: the days kept in
    /// `portfolio_values` for the history as it is now, the others computed (and those
    /// before `today` kept).
    func days(portfolioID: Int, days: [String], timeZone: String, today: String) async throws -> [Day] {
        guard let first = days.first, let last = days.last else { return [] }
        // A range of the primary key (a list of days as `= ANY` would be compared row by row).
        let stored = try await pool.query(
            """
            SELECT v.day::text, v.cash, v.holdings_value, v.inflow_to_date, net_worth(v.cash, v.holdings_value) FROM portfolio_values v
            WHERE v.portfolio_id = \(portfolioID) AND v.time_zone = \(timeZone) AND v.day BETWEEN \(first)::date AND \(last)::date
              AND v.mark = \(Self.mark(portfolioID))
            """
        )
        let wanted = Set(days)
        var byDay: [String: Day] = [:]
        // The range holds every day; only the wanted ones (a month's last, say) are decoded.
        for row in stored {
            let day = try row.decode(String.self, column: 0)
            guard wanted.contains(day) else { continue }
            byDay[day] = Day(day: day, cash: try row.decode(Decimal.self, column: 1), holdingsValue: try row.decode(Decimal.self, column: 2),
                             inflowToDate: try row.decode(Decimal.self, column: 3), netWorth: try row.decode(Decimal.self, column: 4))
        }
        let missing = days.filter { byDay[$0] == nil }
        if !missing.isEmpty {
            for day in try await compute(portfolioID: portfolioID, days: missing, timeZone: timeZone, today: today) {
                byDay[day.day] = day
            }
        }
        return days.compactMap { byDay[$0] }
    }

    /// Everything paid in so far (`paid_in`: the same inflows `portfolio_moves` counts).
    func paidIn(portfolioID: Int) async throws -> Decimal {
        try await pool.query("SELECT paid_in FROM portfolios WHERE id = \(portfolioID)").decodeColumn(Decimal.self).first ?? 0
    }

    /// What a portfolio's history is now: its trades, cash movements and applied actions
    /// counted, and the price-history epoch.
    private static func mark(_ portfolioID: Int) -> PostgresQuery {
        """
        ((SELECT count(*) FROM trades WHERE portfolio_id = \(portfolioID)) || ':'
         || (SELECT count(*) FROM cash_movements WHERE portfolio_id = \(portfolioID)) || ':'
         || (SELECT count(*) FROM corporate_action_applications WHERE portfolio_id = \(portfolioID)) || ':'
         || (SELECT epoch FROM price_history_epoch))
        """
    }

    /// One statement: each day's cash, inflows and positions (SQL `portfolio_at`, the one
    /// rule of a past day's worth), summed per day. The values are kept with the history's
    /// mark read in the same statement, so they always belong to the history they were
    /// computed from.
    private func compute(portfolioID: Int, days: [String], timeZone: String, today: String) async throws -> [Day] {
        let rows = try await pool.withTransaction { session in
            // The planner's estimate of the day × symbol grid would have it compiled (JIT)
            // at a cost above the query's own.
            try await session.execute("SET LOCAL jit = off")
            return try await session.query(
                """
                WITH computed AS (
                    SELECT day, max(cash) AS cash, coalesce(sum(value), 0) AS holdings_value, max(inflow) AS inflow
                    FROM portfolio_at(\(portfolioID), \(days)::date[], \(timeZone))
                    GROUP BY day
                ), kept AS (
                    INSERT INTO portfolio_values (portfolio_id, time_zone, day, mark, cash, holdings_value, inflow_to_date)
                    SELECT \(portfolioID), \(timeZone), day, \(Self.mark(portfolioID)), cash, holdings_value, inflow
                    FROM computed WHERE day < \(today)::date
                    ON CONFLICT (portfolio_id, time_zone, day) DO UPDATE
                        SET mark = EXCLUDED.mark, cash = EXCLUDED.cash, holdings_value = EXCLUDED.holdings_value,
                            inflow_to_date = EXCLUDED.inflow_to_date
                )
                SELECT day::text, cash, holdings_value, inflow, net_worth(cash, holdings_value) FROM computed ORDER BY day
                """
            ).decode((String, Decimal, Decimal, Decimal, Decimal).self)
        }
        return rows.map { Day(day: $0.0, cash: $0.1, holdingsValue: $0.2, inflowToDate: $0.3, netWorth: $0.4) }
    }
}
