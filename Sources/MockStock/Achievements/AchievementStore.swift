import Foundation
import Postgres

/// The catalog and each user's progress. Awarding happens in the database, in the
/// transaction of the event that earns an achievement; awards and progress bars share one
/// definition, `achievement_progress` (sql/functions/achievement_progress.sql).
struct AchievementStore: Sendable {
    let pool: PostgresConnectionPool

    func list(userID: Int) async throws -> [Achievement] {
        let rows = try await pool.query(
            """
            SELECT a.code, a.name, a.description, a.reward, e.earned_at, a.target,
                   CASE WHEN e.earned_at IS NOT NULL THEN a.target ELSE achievement_progress(\(userID), a.code) END
            FROM achievements a
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

extension AchievementStore {
    /// Awards "Up fifty percent" to every user with a portfolio whose return on the money
    /// paid into it (SQL `return_percent` of its `net_worth`) is 50 % or more (prices move
    /// without trades, so a trade is not the event that earns it). The portfolios of users who lack it are valued `chunk` at a time in
    /// portfolio order, each chunk its own short transaction, so the check of a game of
    /// any size stays within the statement timeout and holds no lock for long. An
    /// advisory lock per chunk keeps server processes from valuing the same chunk at the
    /// same moment; the award itself is exactly-once. Returns how many users earned it.
    @discardableResult
    func awardPriceAchievements(chunk: Int = 5_000) async throws -> Int {
        var after = 0
        var earned = 0
        while true {
            let checked: (last: Int?, earned: Int)? = try await pool.withTransaction { session in
                guard try await session.query("SELECT pg_try_advisory_xact_lock(\(Self.lockSpace), 1)").decodeColumn(Bool.self) == [true]
                else { return nil }
                try await session.execute("SET LOCAL jit = off")
                return try await session.query(
                    """
                    WITH candidates AS (
                        SELECT p.id, p.user_id, p.cash, p.paid_in FROM portfolios p
                        WHERE p.id > \(after) AND p.archived_at IS NULL AND p.paid_in > 0
                          AND NOT EXISTS (SELECT 1 FROM user_achievements a WHERE a.user_id = p.user_id AND a.code = 'up_fifty')
                        ORDER BY p.id LIMIT \(chunk)
                    ), valued AS (
                        SELECT v.portfolio_id, sum(v.value) AS value
                        FROM candidates c JOIN holding_values v ON v.portfolio_id = c.id
                        GROUP BY v.portfolio_id
                    ), winners AS (
                        SELECT DISTINCT c.user_id FROM candidates c JOIN valued v ON v.portfolio_id = c.id
                        WHERE return_percent(net_worth(c.cash, v.value), c.paid_in) >= 50
                    )
                    SELECT (SELECT max(id) FROM candidates), count(*) FILTER (WHERE award_achievement(user_id, 'up_fifty'))
                    FROM (SELECT user_id FROM winners ORDER BY user_id) ordered
                    """
                )[0].decode((Int?, Int).self)
            }
            // Another process is checking: it goes on from there.
            guard let checked, let last = checked.last else { return earned }
            earned += checked.earned
            after = last
        }
    }

    /// Advisory-lock namespace of achievement checks.
    private static let lockSpace: Int32 = 0x4143  // "AC"
}
