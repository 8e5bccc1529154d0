import Foundation
import Hummingbird
import Postgres

/// `GET /api/portfolios/{id}/performance`: returns over a range, as decimal fractions
/// (`"0.0100"` is 1 %), and a benchmark's over the same range.
struct Performance: ResponseEncodable, Sendable {
    struct Benchmark: Encodable, Sendable {
        let symbol: String
        @NullEncoded var twr: String?
    }

    @NullEncoded var from: String?
    @NullEncoded var to: String?
    let currency: String
    @NullEncoded var twr: String?
    @NullEncoded var irr: String?
    @NullEncoded var benchmark: Benchmark?
}

/// The return rules, over the points of a value history (one per trading day).
enum Returns {
    /// Time-weighted return: the product over days of (Vᵢ − Fᵢ) / Vᵢ₋₁, less one, where V
    /// is the net worth at a day's end and F the money paid in (+) or taken out (−) that
    /// day, counted at the day's end. Days that start at zero are skipped (nothing was
    /// invested yet). Exact in decimals; nil when no day counts.
    static func timeWeighted(_ values: [ValueHistoryService.Value]) -> Decimal? {
        let returns = daily(values)
        return returns.isEmpty ? nil : returns.reduce(Decimal(1)) { $0 * (1 + $1.r) } - 1
    }

    /// The daily time-weighted returns: on each day after one that ended above zero,
    /// (Vᵢ − Fᵢ) / Vᵢ₋₁ − 1, exact in decimals. The time-weighted return compounds them;
    /// the risk figures (`Risk`) are their statistics.
    static func daily(_ values: [ValueHistoryService.Value]) -> [(day: String, r: Decimal)] {
        zip(values, values.dropFirst()).compactMap { previous, value in
            previous.netWorth > 0 ? (value.day, (value.netWorth - value.netInflow) / previous.netWorth - 1) : nil
        }
    }

    /// Money-weighted return over the whole range: the rate R with
    /// −V₀ − Σᵢ Fᵢ·(1 + R)^(−tᵢ) + Vₙ·(1 + R)^(−1) = 0, where tᵢ is day i's share of the
    /// range (0 at the first point, 1 at the last) — the internal rate of return with the
    /// range as its period, so it compares with the time-weighted return. Solved by
    /// bisection on (−0.9999, 1,000,000) in binary floating point (a rate, not money),
    /// then rounded; nil when the range has no length or no rate solves it.
    static func moneyWeighted(_ values: [ValueHistoryService.Value], days: [Int]) -> Decimal? {
        guard let first = values.first, let last = values.last, let start = days.first, let end = days.last, end > start,
              first.netWorth > 0
        else { return nil }
        let span = Double(end - start)
        var flows: [(amount: Double, at: Double)] = [(-double(first.netWorth), 0)]
        for (value, day) in zip(values, days).dropFirst() where value.netInflow != 0 {
            flows.append((-double(value.netInflow), Double(day - start) / span))
        }
        flows.append((double(last.netWorth), 1))
        func presentValue(_ rate: Double) -> Double {
            flows.reduce(0) { $0 + $1.amount * pow(1 + rate, -$1.at) }
        }
        var low = -0.9999, high = 1_000_000.0
        guard presentValue(low).sign != presentValue(high).sign else { return nil }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if presentValue(middle).sign == presentValue(low).sign { low = middle } else { high = middle }
        }
        return Decimal(string: String(format: "%.6f", (low + high) / 2))
    }

    private static func double(_ value: Decimal) -> Double {
        NSDecimalNumber(decimal: value).doubleValue
    }
}

/// Benchmarks: a symbol's total return over a range, from the total-return series (the
/// adjusted closes `adjusted_bars(..., 'total')` gives, read through its
/// `adjustment_factor` at the two ends only), each end taken at the last close on or
/// before it; or the equal-weighted market, the average of every active instrument's.
struct BenchmarkStore: Sendable {
    let reads: StaleReads

    /// A benchmark as asked for: `market` (in any case), or a known symbol (else `unknownSymbol`).
    static func named(_ text: String, in market: MarketStore) async throws -> String {
        if text.lowercased() == "market" { return "market" }
        let symbol = Symbol.normalize(text)
        guard Symbol.isValid(symbol) else { throw InvalidInput("benchmark must be a symbol or market.") }
        if try await market.instrument(symbol) == nil { throw MarketError.unknownSymbol(symbol) }
        return symbol
    }

    /// A benchmark's total return between two days: a symbol's, or the equal-weighted
    /// market's (the average of every active instrument's); nil without closes.
    func totalReturn(_ benchmark: String, from: String, to: String) async throws -> Decimal? {
        let returns = try await totalReturns(symbols: benchmark == "market" ? nil : [benchmark], from: from, to: to)
        guard benchmark == "market" else { return returns[benchmark] }
        return returns.isEmpty ? nil : returns.values.reduce(0, +) / Decimal(returns.count)
    }

    /// A benchmark's daily total returns from the day after `from` to `to`, by day: a
    /// symbol's close over its previous close in the total-return series, or for the market
    /// the average of every active instrument's that day.
    func dailyReturns(symbol: String?, from: String, to: String) async throws -> [String: Double] {
        let rows = try await reads.query(
            """
            WITH chosen AS (
                SELECT i.symbol FROM instruments i
                WHERE CASE WHEN \(symbol)::text IS NULL THEN i.active ELSE i.symbol = \(symbol)::text END
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
    func totalReturns(symbols: [String]?, from: String, to: String) async throws -> [String: Decimal] {
        let rows = try await reads.query(
            """
            WITH chosen AS (
                SELECT i.symbol FROM instruments i
                WHERE CASE WHEN \(symbols)::text[] IS NULL THEN i.active ELSE i.symbol = ANY(\(symbols)::text[]) END
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

/// Returns of a portfolio and of its benchmark, over the same value history.
struct PerformanceService: Sendable {
    let history: ValueHistoryService
    let benchmarks: BenchmarkStore
    let market: MarketStore

    /// `benchmark`: a symbol, or `market` for the equal-weighted market.
    /// In another `currency` the values are converted day by day first, so the returns
    /// include the exchange rate's moves (the benchmark's stay in dollars).
    func performance(
        userID: Int, portfolioID: Int, from: String?, to: String?, benchmark: String?, currency requested: String? = nil
    ) async throws -> Performance {
        let currency = try await history.currency(requested, userID: userID, portfolioID: portfolioID)
        let (source, held) = try await history.values(userID: userID, portfolioID: portfolioID, from: from, to: to, interval: .day)
        let values = try await history.converted(held, from: source, to: currency)
        let days = values.compactMap { ValueHistoryService.dayNumber($0.day) }
        var result = Performance(
            from: values.first?.day, to: values.last?.day, currency: currency,
            twr: Returns.timeWeighted(values)?.rate,
            irr: Returns.moneyWeighted(values, days: days)?.rate
        )
        if let benchmark {
            let symbol = try await BenchmarkStore.named(benchmark, in: market)
            var twr: Decimal?
            if let first = values.first?.day, let last = values.last?.day {
                twr = try await benchmarks.totalReturn(symbol, from: first, to: last)
            }
            result.benchmark = .init(symbol: symbol, twr: twr?.rate)
        }
        return result
    }
}

extension Decimal {
    /// A rate as a decimal fraction with six digits after the point (`"0.018480"`).
    var rate: String {
        let text = rounded(6).moneyString
        let digits = text.split(separator: ".").last?.count ?? 0
        return text + String(repeating: "0", count: max(0, 6 - digits))
    }
}
