import Foundation
import Hummingbird

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
            let league = try await benchmarks.market(ofPortfolio: portfolioID)
            let symbol = try await BenchmarkStore.named(benchmark, in: market, league: league)
            var twr: Decimal?
            if let first = values.first?.day, let last = values.last?.day {
                twr = try await benchmarks.totalReturn(symbol, from: first, to: last, market: league)
            }
            result.benchmark = .init(symbol: Symbol.shown(symbol), twr: twr?.rate)
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
