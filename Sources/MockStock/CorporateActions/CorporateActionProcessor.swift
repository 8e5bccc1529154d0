import Foundation
import Logging
import Postgres

/// Applies splits and dividends to the portfolios holding the stock once the market the
/// server plays reaches their ex-date (`MarketClock.marketDay`: the replay day when
/// replaying history, else today in the market's time zone). Each holder's application is its own small transaction through the SQL function
/// `apply_corporate_action`, recorded per (action, portfolio), so a restart, a second
/// server process or a replayed day never applies it twice. Runs after prices are stored
/// and every `ORDER_SWEEP_SECONDS` (a chore of the periodic service).
struct CorporateActionProcessor: Sendable {
    let pool: PostgresConnectionPool
    let clock: MarketClock
    /// When replaying, the first replayed day: actions after it are news to the players,
    /// although they were loaded with the history before.
    let replayStart: String?
    let logger: Logger

    /// Applies every action that is due; returns how many portfolios it changed.
    @discardableResult
    func process() async throws -> Int {
        let day = try await clock.marketDay()
        // An action is news when it was recorded no later than its ex-date (an admin's, or
        // prices loaded ahead; both days the market's), or when a replay started before it.
        let due = try await pool.query(
            """
            SELECT id FROM corporate_actions
            WHERE applied_at IS NULL AND ex_date <= \(day)::date
              AND (ex_date >= market_day(created_at, \(clock.zone)) OR ex_date > \(replayStart)::date)
            ORDER BY ex_date, id
            """
        ).decodeColumn(Int.self)
        var changed = 0
        for action in due {
            changed += try await apply(action)
        }
        return changed
    }

    private func apply(_ action: Int) async throws -> Int {
        // A split's ratio divides the stored quote once, where the quote does not know of the
        // split (set by an admin or walked by the simulated market).
        try await pool.execute(
            """
            WITH marked AS (
                UPDATE corporate_actions SET quote_adjusted = true
                WHERE id = \(action) AND kind = 'split' AND NOT quote_adjusted
                RETURNING symbol, ratio
            )
            UPDATE quotes q SET price = round(q.price / marked.ratio, 4),
                                previous_close = round(q.previous_close / marked.ratio, 4)
            FROM marked WHERE q.symbol = marked.symbol AND q.source IN ('admin', 'simulated')
            """
        )
        var changed = 0
        while true {
            let holders = try await pool.query(
                """
                SELECT h.portfolio_id FROM corporate_actions a JOIN holdings h ON h.symbol = a.symbol
                WHERE a.id = \(action) AND h.quantity <> 0
                  AND NOT EXISTS (SELECT 1 FROM corporate_action_applications x WHERE x.action_id = a.id AND x.portfolio_id = h.portfolio_id)
                ORDER BY h.portfolio_id LIMIT 500
                """
            ).decodeColumn(Int.self)
            if holders.isEmpty { break }
            var progress = false
            for portfolio in holders {
                let applied = try await pool.queryRetryingTransientFailures(
                    "SELECT apply_corporate_action(\(action), \(portfolio))"
                ).decodeColumn(Bool.self)[0]
                if applied { changed += 1 }
                progress = progress || applied
            }
            // Another process applied them meanwhile: look again, then stop.
            if !progress { break }
        }
        try await pool.execute("UPDATE corporate_actions SET applied_at = now() WHERE id = \(action) AND applied_at IS NULL")
        if changed > 0 { logger.info("corporate action applied", metadata: ["action": "\(action)", "portfolios": "\(changed)"]) }
        return changed
    }
}
