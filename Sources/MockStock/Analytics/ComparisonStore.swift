import Foundation
import Postgres

/// What correlations and comparisons (`Correlation`, `Comparison`) read: both read the
/// total-return series (`adjusted_bars(..., 'total')`: splits neutral, dividends
/// reinvested), so a split is not a crash and a dividend not a loss.
struct ComparisonStore: Sendable {
    let reads: StaleReads

    /// The symbols of `symbols` that no instrument has.
    func unknown(_ symbols: [String]) async throws -> [String] {
        try await reads.query(
            """
            SELECT s FROM unnest(\(symbols)::text[]) s
            WHERE NOT EXISTS (SELECT 1 FROM instruments i WHERE i.symbol = s) ORDER BY s
            """
        ).decodeColumn(String.self)
    }

    /// The last day any of the symbols has a close.
    func lastDay(_ symbols: [String]) async throws -> String? {
        try await reads.query("SELECT max(day)::text FROM daily_bars WHERE symbol = ANY(\(symbols)::text[])").decodeColumn(String?.self).first ?? nil
    }

    /// Each pair's Pearson coefficient (binary floating point: a statistic, not money)
    /// and the number of common days.
    func correlations(_ symbols: [String], from: String, to: String) async throws -> (pairs: [String: Double?], days: Int) {
        let rows = try await reads.query(
            """
            WITH series AS (
                SELECT s.symbol, a.day, a.close / lag(a.close) OVER (PARTITION BY s.symbol ORDER BY a.day) - 1 AS r
                FROM unnest(\(symbols)::text[]) s (symbol)
                CROSS JOIN LATERAL adjusted_bars(s.symbol, \(from)::date, \(to)::date, 'total') a
            ), common AS (
                SELECT day FROM series WHERE r IS NOT NULL GROUP BY day HAVING count(*) = cardinality(\(symbols)::text[])
            )
            SELECT x.symbol || '|' || y.symbol, corr(x.r::float8, y.r::float8), count(*)::int8
            FROM series x JOIN series y ON y.day = x.day AND x.symbol <= y.symbol
            WHERE x.day IN (SELECT day FROM common)
            GROUP BY x.symbol, y.symbol
            """
        ).decode((String, Double?, Int).self)
        return (Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) }), rows.first?.2 ?? 0)
    }

    func rebased(_ symbols: [String], from: String, to: String) async throws -> [(symbol: String, day: String, value: Decimal)] {
        try await reads.query(
            """
            SELECT s.symbol, a.day::text, round(100 * a.close / first_value(a.close) OVER (PARTITION BY s.symbol ORDER BY a.day), 4)
            FROM unnest(\(symbols)::text[]) s (symbol)
            CROSS JOIN LATERAL adjusted_bars(s.symbol, \(from)::date, \(to)::date, 'total') a
            ORDER BY s.symbol, a.day
            """
        ).decode((String, String, Decimal).self).map { (symbol: $0.0, day: $0.1, value: $0.2) }
    }
}
