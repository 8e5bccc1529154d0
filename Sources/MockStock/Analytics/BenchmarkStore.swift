import Foundation
import Postgres

/// Benchmarks: a symbol's total return over a range, from the total-return series (the
/// adjusted closes `adjusted_bars(..., 'total')` gives, read through its
/// `adjustment_factor` at the two ends only), each end taken at the last close on or
/// before it; or the equal-weighted market, the average of every active instrument's. A
/// scenario league's market (`market`, its id) is its own instruments: its `market` is
/// theirs, and its symbols are its instruments' (`Symbol.stored`).
struct BenchmarkStore: Sendable {
    let reads: StaleReads

    /// A benchmark as asked for: `market` (in any case), or a known symbol (else
    /// `unknownSymbol`), of the scenario league `league`'s market where given.
    static func named(_ text: String, in market: MarketStore, league: Int? = nil) async throws -> String {
        if text.lowercased() == "market" { return "market" }
        let symbol = Symbol.normalize(text)
        guard Symbol.isValid(symbol) else { throw InvalidInput("benchmark must be a symbol or market.") }
        let stored = Symbol.stored(symbol, inLeague: league)
        if try await market.instrument(stored) == nil { throw MarketError.unknownSymbol(symbol) }
        return stored
    }

    /// The scenario league whose market a portfolio trades in (nil: the real market).
    func market(ofPortfolio portfolioID: Int) async throws -> Int? {
        try await reads.query(
            "SELECT m.league_id FROM portfolios p JOIN league_markets m ON m.league_id = p.league_id WHERE p.id = \(portfolioID)"
        ).decodeColumn(Int.self).first
    }

    /// A benchmark's total return between two days: a symbol's, or the equal-weighted
    /// market's (the average of every active instrument's); nil without closes.
    func totalReturn(_ benchmark: String, from: String, to: String, market: Int? = nil) async throws -> Decimal? {
        let returns = try await totalReturns(symbols: benchmark == "market" ? nil : [benchmark], from: from, to: to, market: market)
        guard benchmark == "market" else { return returns[benchmark] }
        return returns.isEmpty ? nil : returns.values.reduce(0, +) / Decimal(returns.count)
    }

    /// A benchmark's daily total returns from the day after `from` to `to`, by day: a
    /// symbol's close over its previous close in the total-return series, or for the market
    /// the average of every active instrument's that day.
    func dailyReturns(symbol: String?, from: String, to: String, market: Int? = nil) async throws -> [String: Double] {
        let rows = try await reads.query(
            """
            WITH chosen AS (
                SELECT i.symbol FROM instruments i
                WHERE CASE WHEN \(symbol)::text IS NULL THEN i.active AND i.league_id IS NOT DISTINCT FROM \(market)::int8
                           ELSE i.symbol = \(symbol)::text END
            ), series AS (
                SELECT a.day, a.close / lag(a.close) OVER (PARTITION BY c.symbol ORDER BY a.day) - 1 AS r
                FROM chosen c CROSS JOIN LATERAL adjusted_bars(c.symbol, \(from)::date - 10, \(to)::date, 'total') a
            )
            SELECT day::text, avg(r)::float8 FROM series
            WHERE r IS NOT NULL AND day > \(from)::date
            GROUP BY day
            """
        )
        return Dictionary(uniqueKeysWithValues: try rows.decode((String, Double).self).map { ($0.0, $0.1) })
    }

    /// The symbols' returns between `from` and `to`, for those with closes at both ends.
    func totalReturns(symbols: [String]?, from: String, to: String, market: Int? = nil) async throws -> [String: Decimal] {
        let rows = try await reads.query(
            """
            WITH chosen AS (
                SELECT i.symbol FROM instruments i
                WHERE CASE WHEN \(symbols)::text[] IS NULL THEN i.active AND i.league_id IS NOT DISTINCT FROM \(market)::int8
                           ELSE i.symbol = ANY(\(symbols)::text[]) END
            ), ends AS (
                SELECT c.symbol,
                       coalesce((SELECT b.day FROM daily_bars b WHERE b.symbol = c.symbol AND b.day <= \(from)::date ORDER BY b.day DESC LIMIT 1),
                                (SELECT b.day FROM daily_bars b WHERE b.symbol = c.symbol AND b.day > \(from)::date ORDER BY b.day LIMIT 1)) AS first,
                       (SELECT b.day FROM daily_bars b WHERE b.symbol = c.symbol AND b.day <= \(to)::date ORDER BY b.day DESC LIMIT 1) AS last
                FROM chosen c
            )
            SELECT e.symbol, round(l.close * lf.factor, 4) / round(f.close * ff.factor, 4) - 1
            FROM ends e
            JOIN daily_bars f ON f.symbol = e.symbol AND f.day = e.first
            JOIN daily_bars l ON l.symbol = e.symbol AND l.day = e.last
            CROSS JOIN LATERAL adjustment_factor(e.symbol, e.first, \(to)::date, 'total') ff
            CROSS JOIN LATERAL adjustment_factor(e.symbol, e.last, \(to)::date, 'total') lf
            WHERE e.first < e.last
            """
        )
        return Dictionary(uniqueKeysWithValues: try rows.decode((String, Decimal).self).map { ($0.0, $0.1) })
    }
}
