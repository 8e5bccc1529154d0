import Foundation
import Postgres

/// What only the Alpaca-compatible API reads: the UUIDs accounts and assets are known by.
struct AlpacaStore: Sendable {
    let pool: PostgresConnectionPool

    struct AccountRecord: Sendable {
        let id: Int
        let uuid: String
        let createdAt: Date
        /// False when the portfolio's league is not running (it cannot trade now).
        let running: Bool
    }

    struct AssetRecord: Sendable {
        let uuid: String
        let symbol: String
        let name: String
        let active: Bool
    }

    /// The user's portfolio (nil: the personal one).
    func account(userID: Int, portfolioID: Int?) async throws -> AccountRecord? {
        try await pool.query(
            """
            SELECT p.id, p.uuid::text, p.created_at,
                   l.id IS NULL OR (l.starts_at <= now() AND (l.ends_at IS NULL OR l.ends_at > now()) AND l.finished_at IS NULL)
            FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            WHERE p.user_id = \(userID) AND p.archived_at IS NULL
              AND CASE WHEN \(portfolioID)::int8 IS NULL THEN p.league_id IS NULL ELSE p.id = \(portfolioID)::int8 END
            """
        ).decode((Int, String, Date, Bool).self).first.map { AccountRecord(id: $0.0, uuid: $0.1, createdAt: $0.2, running: $0.3) }
    }

    /// Instruments, by symbol; `active` nil for all.
    func assets(active: Bool?) async throws -> [AssetRecord] {
        try await pool.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE \(active)::bool IS NULL OR active = \(active)::bool ORDER BY symbol
            """
        ).decode((String, String, String, Bool).self).map { AssetRecord(uuid: $0.0, symbol: $0.1, name: $0.2, active: $0.3) }
    }

    /// The asset ids of these symbols.
    func assetIDs(_ symbols: Set<String>) async throws -> [String: String] {
        let rows = try await pool.query("SELECT symbol, uuid::text FROM instruments WHERE symbol = ANY(\(Array(symbols)))")
            .decode((String, String).self)
        return Dictionary(rows) { first, _ in first }
    }

    /// One instrument by symbol or by its UUID.
    func asset(symbolOrID: String) async throws -> AssetRecord? {
        let uuid = UUID(uuidString: symbolOrID)?.uuidString.lowercased()
        return try await pool.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE CASE WHEN \(uuid)::text IS NULL THEN symbol = \(symbolOrID.uppercased()) ELSE uuid = \(uuid)::uuid END
            """
        ).decode((String, String, String, Bool).self).first.map { AssetRecord(uuid: $0.0, symbol: $0.1, name: $0.2, active: $0.3) }
    }
}

extension AlpacaStore {
    /// A bar of `/v2/stocks/bars`: one day, week or month of one symbol.
    struct BarRecord: Sendable {
        let symbol: String
        let day: String
        let timestamp: String
        let open: Decimal
        let high: Decimal
        let low: Decimal
        let close: Decimal
        let volume: Int
    }

    /// Bars of `symbols` from `from` to `to` (days), adjusted as asked for the actions up to
    /// `through` (the replay day, or all), per `period` (`day`, `week`, `month`), by symbol
    /// then time, after the page position `after` (symbol, period's first day).
    func bars(
        symbols: [String], from: String, to: String, through: String?, adjusted: AdjustedHistory, period: String,
        after: (symbol: String, day: String)?, limit: Int
    ) async throws -> [BarRecord] {
        let rows = try await pool.query(
            """
            WITH raw AS (
                SELECT s.symbol, b.day, b.open, b.high, b.low, b.close, b.volume
                FROM unnest(\(symbols)::text[]) s (symbol)
                CROSS JOIN LATERAL adjusted_bars(s.symbol, \(from)::date, \(through)::date, \(adjusted)) b
                WHERE b.day <= \(to)::date AND (\(through)::date IS NULL OR b.day <= \(through)::date)
            ), periods AS (
                SELECT symbol, date_trunc(\(period), day)::date AS first_day,
                       (array_agg(coalesce(open, close) ORDER BY day))[1] AS open, max(coalesce(high, close)) AS high,
                       min(coalesce(low, close)) AS low, (array_agg(close ORDER BY day DESC))[1] AS close, sum(volume)::int8 AS volume
                FROM raw GROUP BY symbol, first_day
            )
            SELECT symbol, to_char(first_day, 'YYYY-MM-DD'),
                   to_char((first_day::timestamp AT TIME ZONE 'America/New_York') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   open, high, low, close, volume
            FROM periods
            WHERE \(after?.symbol)::text IS NULL OR (symbol, first_day) > (\(after?.symbol)::text, \(after?.day)::date)
            ORDER BY symbol, first_day LIMIT \(limit)
            """
        )
        return try rows.decode((String, String, String, Decimal, Decimal, Decimal, Decimal, Int).self).map {
            BarRecord(symbol: $0.0, day: $0.1, timestamp: $0.2, open: $0.3, high: $0.4, low: $0.5, close: $0.6, volume: $0.7)
        }
    }

    /// Each symbol's last daily bar (up to `through`), as traded.
    func latestBars(symbols: [String], through: String?) async throws -> [BarRecord] {
        let rows = try await pool.query(
            """
            SELECT DISTINCT ON (symbol) symbol, to_char(day, 'YYYY-MM-DD'),
                   to_char((day::timestamp AT TIME ZONE 'America/New_York') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   coalesce(open, close), coalesce(high, close), coalesce(low, close), close, volume
            FROM daily_bars
            WHERE symbol = ANY(\(symbols)::text[]) AND (\(through)::date IS NULL OR day <= \(through)::date)
            ORDER BY symbol, day DESC
            """
        )
        return try rows.decode((String, String, String, Decimal, Decimal, Decimal, Decimal, Int).self).map {
            BarRecord(symbol: $0.0, day: $0.1, timestamp: $0.2, open: $0.3, high: $0.4, low: $0.5, close: $0.6, volume: $0.7)
        }
    }
}
