import Foundation
import Postgres

/// A portfolio's value on past days, rebuilt from its history alone: every fill, cash
/// movement and split (`portfolio_moves`: what each activity does to cash, inflows and
/// shares) up to the end of each day, with each held
/// symbol valued at that day's close (or the last close before it; in a portfolio that
/// holds another currency, at that day's reference rate). Closes are the
/// stored, unadjusted ones: the shares held before a split are the shares of that time,
/// so no adjustment is needed, and dividends are in the cash. Days once computed are
/// kept (`portfolio_values`, see its migration) for as long as the history is unchanged.
struct ValueHistoryStore: Sendable {
    let pool: PostgresConnectionPool

    struct Day: Sendable {
        let day: String
        let cash: Decimal
        let holdingsValue: Decimal
        /// Everything paid in or taken out up to the end of the day.
        let inflowToDate: Decimal
    }

    /// The currency the user's portfolio (nil: the personal one) is shown in by default.
    func baseCurrency(userID: Int, portfolioID: Int?) async throws -> String? {
        try await pool.query(
            """
            SELECT base_currency FROM portfolios
            WHERE user_id = \(userID)
              AND portfolio_named(kind, id, \(portfolioID)::int8)
            """
        ).decodeColumn(String.self).first
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
            SELECT v.day::text, v.cash, v.holdings_value, v.inflow_to_date FROM portfolio_values v
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
                             inflowToDate: try row.decode(Decimal.self, column: 3))
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

    /// One statement: running sums over the activities give cash, inflows and shares per
    /// symbol on every day that matters; each held symbol is valued at the close of the
    /// last day with one (the running latest priced day, joined back to its bar). The
    /// values are kept with the history's mark read in the same statement, so they always
    /// belong to the history they were computed from.
    private func compute(portfolioID: Int, days: [String], timeZone: String, today: String) async throws -> [Day] {
        guard let last = days.last else { return [] }
        let rows = try await pool.withTransaction { session in
            // The planner's estimate of the day × symbol grid would have it compiled (JIT)
            // at a cost above the query's own.
            try await session.execute("SET LOCAL jit = off")
            return try await session.query(
                """
                WITH days AS (
                    SELECT unnest(\(days)::date[]) AS day
                ), moves AS (
                    SELECT market_day(m.at, \(timeZone)) AS day, m.symbol, m.amount, m.inflow, m.shares
                    FROM portfolio_moves m
                    WHERE m.portfolio_id = \(portfolioID) AND m.at < market_day_start(\(last)::date + 1, \(timeZone))
                ), ledger AS (
                    SELECT day, sum(sum(amount)) OVER (ORDER BY day) AS cash, sum(sum(inflow)) OVER (ORDER BY day) AS inflow
                    FROM (SELECT day, amount, inflow FROM moves UNION ALL SELECT day, 0, 0 FROM days) x
                    GROUP BY day
                ), symbols AS (
                    SELECT DISTINCT symbol FROM moves WHERE symbol IS NOT NULL
                ), grid AS (
                    SELECT day, symbol, sum(shares) AS shares
                    FROM (SELECT day, symbol, shares FROM moves WHERE symbol IS NOT NULL
                          UNION ALL SELECT d.day, s.symbol, 0 FROM days d CROSS JOIN symbols s) g
                    GROUP BY day, symbol
                ), running AS (
                    SELECT r.day, r.symbol, sum(r.shares) OVER w AS held, max(b.day) OVER w AS priced_on
                    FROM grid r LEFT JOIN daily_bars b ON b.symbol = r.symbol AND b.day = r.day
                    WINDOW w AS (PARTITION BY r.symbol ORDER BY r.day)
                ), rates AS (
                    -- Dollar closes in the portfolio's currency: each day's reference rate.
                    SELECT d.day, CASE WHEN p.cash_currency = 'USD' THEN 1
                                       ELSE coalesce((SELECT x.rate FROM fx_rate('USD', p.cash_currency, d.day) x),
                                                     fx_usd_to(p.cash_currency)) END AS rate
                    FROM days d CROSS JOIN portfolios p WHERE p.id = \(portfolioID)
                ), valued AS (
                    SELECT r.day, sum(r.held * round(x.rate * coalesce(b.close, (SELECT p.close FROM daily_bars p WHERE p.symbol = r.symbol
                                                                  AND p.day < r.day ORDER BY p.day DESC LIMIT 1)), 4)) AS value
                    FROM running r JOIN rates x ON x.day = r.day LEFT JOIN daily_bars b ON b.symbol = r.symbol AND b.day = r.priced_on
                    WHERE r.held <> 0
                    GROUP BY r.day
                ), computed AS (
                    SELECT d.day, l.cash, coalesce(v.value, 0) AS holdings_value, l.inflow
                    FROM days d JOIN ledger l ON l.day = d.day LEFT JOIN valued v ON v.day = d.day
                ), kept AS (
                    INSERT INTO portfolio_values (portfolio_id, time_zone, day, mark, cash, holdings_value, inflow_to_date)
                    SELECT \(portfolioID), \(timeZone), day, \(Self.mark(portfolioID)), cash, holdings_value, inflow
                    FROM computed WHERE day < \(today)::date
                    ON CONFLICT (portfolio_id, time_zone, day) DO UPDATE
                        SET mark = EXCLUDED.mark, cash = EXCLUDED.cash, holdings_value = EXCLUDED.holdings_value,
                            inflow_to_date = EXCLUDED.inflow_to_date
                )
                SELECT day::text, cash, holdings_value, inflow FROM computed ORDER BY day
                """
            ).decode((String, Decimal, Decimal, Decimal).self)
        }
        return rows.map { Day(day: $0.0, cash: $0.1, holdingsValue: $0.2, inflowToDate: $0.3) }
    }
}
