import Foundation
import Postgres

/// A portfolio's value on past days, rebuilt from its history alone: every fill, cash
/// movement and split (the `activities` view) up to the end of each day, with each held
/// symbol valued at that day's close (or the last close before it). Closes are the
/// stored, unadjusted ones: the shares held before a split are the shares of that time,
/// so no adjustment is needed, and dividends are in the cash.
struct ValueHistoryStore: Sendable {
    let pool: PostgresConnectionPool

    /// Cash movements that bring money in or take it out (not returns: dividends and cash
    /// in lieu are earned by the holdings).
    static let inflowKinds = ["starting_cash", "reward", "adjustment", "deposit", "withdrawal"]

    struct Day: Sendable {
        let day: String
        let cash: Decimal
        let holdingsValue: Decimal
        /// Everything paid in or taken out up to the end of the day.
        let inflowToDate: Decimal
    }

    func createdAt(portfolioID: Int) async throws -> Date? {
        try await pool.query("SELECT created_at FROM portfolios WHERE id = \(portfolioID)").decodeColumn(Date.self).first
    }

    /// The portfolio at the end of each of `days` (`YYYY-MM-DD`, ascending), counting
    /// activities in the market's time zone `timeZone`.
    ///
    /// One statement: running sums over the activities give cash, inflows and shares per
    /// symbol on every day that matters; closes are carried forward over days without one
    /// (a holiday, a gap in the data) by numbering the closes seen so far.
    func days(portfolioID: Int, days: [String], timeZone: String) async throws -> [Day] {
        guard let last = days.last else { return [] }
        let rows = try await pool.query(
            """
            WITH days AS (
                SELECT unnest(\(days)::date[]) AS day
            ), moves AS (
                SELECT (a.at AT TIME ZONE \(timeZone))::date AS day, a.symbol, coalesce(a.amount, 0) AS amount,
                       CASE WHEN a.type = ANY(\(Self.inflowKinds)::text[]) THEN a.amount ELSE 0 END AS inflow,
                       CASE a.type WHEN 'fill' THEN CASE a.side WHEN 'buy' THEN a.quantity ELSE -a.quantity END
                                   WHEN 'split' THEN a.quantity ELSE 0 END AS shares
                FROM activities a
                WHERE a.portfolio_id = \(portfolioID) AND a.at < ((\(last)::date + 1)::timestamp AT TIME ZONE \(timeZone))
            ), ledger AS (
                SELECT day, sum(sum(amount)) OVER (ORDER BY day) AS cash, sum(sum(inflow)) OVER (ORDER BY day) AS inflow
                FROM (SELECT day, amount, inflow FROM moves UNION ALL SELECT day, 0, 0 FROM days) x
                GROUP BY day
            ), symbols AS (
                SELECT DISTINCT symbol FROM moves WHERE symbol IS NOT NULL
            ), positions AS (
                SELECT g.day, g.symbol, sum(sum(g.shares)) OVER (PARTITION BY g.symbol ORDER BY g.day) AS shares
                FROM (SELECT day, symbol, shares FROM moves WHERE symbol IS NOT NULL
                      UNION ALL SELECT d.day, s.symbol, 0 FROM days d CROSS JOIN symbols s) g
                GROUP BY g.day, g.symbol
            ), closes AS (
                SELECT p.day, p.symbol, p.shares, b.close, count(b.close) OVER (PARTITION BY p.symbol ORDER BY p.day) AS seen
                FROM positions p LEFT JOIN daily_bars b ON b.symbol = p.symbol AND b.day = p.day
            ), carried AS (
                SELECT c.day, c.shares,
                       coalesce(first_value(c.close) OVER (PARTITION BY c.symbol, c.seen ORDER BY c.day),
                                (SELECT b.close FROM daily_bars b WHERE b.symbol = c.symbol AND b.day < c.day
                                 ORDER BY b.day DESC LIMIT 1)) AS price
                FROM closes c
            ), valued AS (
                SELECT day, sum(shares * price) AS value FROM carried WHERE shares <> 0 GROUP BY day
            )
            SELECT d.day::text, l.cash, coalesce(v.value, 0), l.inflow
            FROM days d JOIN ledger l ON l.day = d.day LEFT JOIN valued v ON v.day = d.day
            ORDER BY d.day
            """
        )
        return try rows.decode((String, Decimal, Decimal, Decimal).self).map {
            Day(day: $0.0, cash: $0.1, holdingsValue: $0.2, inflowToDate: $0.3)
        }
    }
}
