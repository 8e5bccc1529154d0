import Foundation
import Hummingbird
import Postgres

/// An achievement of the catalog with the caller's progress towards it.
struct Achievement: ResponseEncodable, Sendable {
    let code: String
    let name: String
    let description: String
    let reward: String
    @NullEncoded var earnedAt: Date?
    /// How far along the caller is: `progress` of `target` (equal once earned).
    let progress: Int
    let target: Int
}

/// The catalog and each user's progress. Awarding happens in the database, in the
/// transaction of the event that earns an achievement (sql/0006_achievements.sql).
struct AchievementStore: Sendable {
    let pool: PostgresConnectionPool

    func list(userID: Int) async throws -> [Achievement] {
        let rows = try await pool.query(
            """
            WITH mine AS (SELECT id FROM portfolios WHERE user_id = \(userID)),
            counts AS (
                SELECT (SELECT count(*) FROM (SELECT 1 FROM trades WHERE portfolio_id IN (SELECT id FROM mine) LIMIT 10) t) AS trades,
                       (SELECT count(*) FROM (SELECT 1 FROM trades WHERE portfolio_id IN (SELECT id FROM mine)
                                                 AND realized_gain > 0 LIMIT 1) t) AS profitable,
                       (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM holdings
                                                         WHERE portfolio_id IN (SELECT id FROM mine) AND quantity > 0
                                                         GROUP BY portfolio_id) held) AS symbols
            )
            SELECT a.code, a.name, a.description, a.reward, e.earned_at, a.target,
                   CASE WHEN e.earned_at IS NOT NULL THEN a.target
                        ELSE least(a.target, CASE a.code WHEN 'first_trade' THEN counts.trades
                                                         WHEN 'ten_trades' THEN counts.trades
                                                         WHEN 'first_profit' THEN counts.profitable
                                                         WHEN 'diversified' THEN counts.symbols
                                                         ELSE 0 END) END
            FROM achievements a CROSS JOIN counts
            LEFT JOIN user_achievements e ON e.code = a.code AND e.user_id = \(userID)
            ORDER BY a.position
            """
        )
        return try rows.map { row in
            let (code, name, description, reward, earnedAt, target, progress) =
                try row.decode((String, String, String, Decimal, Date?, Int, Int).self)
            return Achievement(code: code, name: name, description: description, reward: reward.moneyString,
                               earnedAt: earnedAt, progress: progress, target: target)
        }
    }
}

struct AchievementController {
    let store: AchievementStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("achievements", use: list)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [Achievement] {
        try await store.list(userID: context.requireIdentity().userID)
    }
}
