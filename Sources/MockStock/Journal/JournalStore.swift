import Foundation
import Postgres

/// The notes on the orders and trades of a league's portfolios, newest first: the ones
/// every member plays (`league_portfolios`, archived ones included: a reset keeps its
/// history), written since the portfolio plays there (a shared league's member's personal
/// notes from before they joined are not the league's). Every note is on an order row: a
/// plain trade with a note is written with one.
struct JournalStore: Sendable {
    let pool: PostgresConnectionPool

    func entries(leagueID: Int, userID: Int?, before: Int?, limit: Int) async throws -> [JournalEntry] {
        try await pool.query(
            """
            SELECT o.user_id, u.username, o.id, o.symbol, o.side, o.quantity, o.note, o.created_at
            FROM league_portfolios(\(leagueID)) lp
                 JOIN orders o ON o.portfolio_id = lp.portfolio_id AND o.note IS NOT NULL AND o.created_at >= lp.since
                 JOIN users u ON u.id = o.user_id
            WHERE (\(userID)::int8 IS NULL OR lp.user_id = \(userID)::int8)
              AND (\(before)::int8 IS NULL OR o.id < \(before)::int8)
            ORDER BY o.id DESC LIMIT \(limit)
            """
        ).decode((Int, String, Int, String, TradeSide, Int, String, Date).self).map {
            JournalEntry(userId: $0.0, username: $0.1, orderId: $0.2, symbol: Symbol.shown($0.3), side: $0.4, quantity: $0.5, note: $0.6, createdAt: $0.7)
        }
    }
}
