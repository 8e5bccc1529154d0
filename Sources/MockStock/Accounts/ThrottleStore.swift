import Foundation
import Postgres

/// Fixed-window counters kept in the database, so every server process counts against
/// the same budgets. An attempt is counted before the work it guards, by one statement
/// over all its budgets: a burst of concurrent attempts is serialised on the rows and
/// no attempt past a limit gets through.
struct ThrottleStore: Sendable {
    let pool: PostgresConnectionPool

    /// At most `limit` attempts per `window` under `key`.
    struct Budget: Sendable, Equatable {
        let key: String
        let limit: Int
        let window: Duration
    }

    /// Whether the upsert's row `t` is still in the window it counts (else it starts anew).
    private static let inWindow: PostgresQuery = "t.window_start > now() - make_interval(secs => excluded.window_seconds)"

    /// Counts one attempt against every budget. Returns the seconds until the attempt
    /// would fit the budgets it exceeds, or nil when it fits them all (and goes ahead).
    func spend(_ budgets: [Budget]) async throws -> Int? {
        // The same order of keys in every statement, so two never wait on each other.
        let attempts = PostgresQuery.joined(
            budgets.sorted { $0.key < $1.key }.map { budget in
                "(\(budget.key), \(Int(budget.window.inSeconds))::int4, \(budget.limit)::int4)"
            },
            separator: ", "
        )
        let rows = try await pool.queryRetryingTransientFailures(
            """
            WITH attempt (key, window_seconds, hit_limit) AS (VALUES \(attempts)),
            counted AS (
                INSERT INTO throttle_windows AS t (key, window_start, window_seconds, hits)
                SELECT key, now(), window_seconds, 1 FROM attempt
                ON CONFLICT (key) DO UPDATE SET
                    hits = CASE WHEN \(Self.inWindow) THEN t.hits + 1 ELSE 1 END,
                    window_start = CASE WHEN \(Self.inWindow) THEN t.window_start ELSE now() END,
                    window_seconds = excluded.window_seconds
                RETURNING key, hits, window_start + make_interval(secs => window_seconds) AS window_end
            )
            SELECT max(greatest(1, ceil(extract(epoch FROM counted.window_end - now()))))::int8
            FROM counted JOIN attempt USING (key)
            WHERE counted.hits > attempt.hit_limit
            """
        )
        return try rows.decodeColumn(Int?.self).first ?? nil
    }

    /// Takes up to `count` attempts of `budget` at once, for a process to spend itself
    /// (`BotBudgets`): how many the window still had, up to `count` (none once it is spent),
    /// and how long until the window ends, when they lapse. One statement, serialised on
    /// the key's row like `spend`, so the budget is never exceeded however many processes
    /// lease at once.
    func lease(_ budget: Budget, count: Int) async throws -> (granted: Int, lapsesIn: Duration) {
        let wanted: PostgresQuery = "least(\(count)::int4, \(budget.limit)::int4)"
        // What an open window still grants: what is wanted, up to what is left of the limit.
        let granted: PostgresQuery = "least(excluded.granted, greatest(\(budget.limit)::int4 - t.hits, 0))"
        let rows = try await pool.queryRetryingTransientFailures(
            """
            INSERT INTO throttle_windows AS t (key, window_start, window_seconds, hits, granted)
            VALUES (\(budget.key), now(), \(Int(budget.window.inSeconds))::int4, \(wanted), \(wanted))
            ON CONFLICT (key) DO UPDATE SET
                granted = CASE WHEN \(Self.inWindow) THEN \(granted) ELSE excluded.granted END,
                hits = CASE WHEN \(Self.inWindow) THEN t.hits + \(granted) ELSE excluded.hits END,
                window_start = CASE WHEN \(Self.inWindow) THEN t.window_start ELSE now() END,
                window_seconds = excluded.window_seconds
            RETURNING granted,
                      greatest(0, extract(epoch FROM window_start + make_interval(secs => window_seconds) - now()) * 1000)::int8
            """
        )
        guard let row = try rows.decode((Int, Int).self).first else { return (0, budget.window) }
        return (row.0, .milliseconds(row.1))
    }

    /// Gives an attempt back to `budgets` (it turned out not to be a failure) and
    /// forgets `forgotten` altogether.
    func refund(_ budgets: [Budget], forgetting forgotten: [Budget]) async throws {
        func keys(_ budgets: [Budget]) -> PostgresQuery {
            budgets.isEmpty ? "NULL" : PostgresQuery.joined(budgets.map { "\($0.key)" }, separator: ", ")
        }
        _ = try await pool.queryRetryingTransientFailures(
            """
            WITH forgotten AS (DELETE FROM throttle_windows WHERE key IN (\(keys(forgotten))))
            UPDATE throttle_windows SET hits = greatest(hits - 1, 0) WHERE key IN (\(keys(budgets)))
            """
        )
    }

    /// Forgets windows long over, so counters do not pile up (run by `HousekeepingService`).
    func forgetEndedWindows() async throws {
        try await pool.execute(
            "DELETE FROM throttle_windows WHERE window_start < now() - make_interval(secs => window_seconds) - interval '1 hour'"
        )
    }
}
