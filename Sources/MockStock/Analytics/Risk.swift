import Foundation
import Hummingbird
import Postgres

/// `GET /api/portfolios/{id}/risk`: risk and risk-adjusted figures of a portfolio over a
/// range, from its daily time-weighted returns, as decimal strings (six places), null
/// where there are fewer than two daily returns (or a figure has no value: a Sharpe ratio
/// of returns that never vary).
struct RiskReport: ResponseEncodable, Sendable {
    @NullEncoded var from: String?
    @NullEncoded var to: String?
    /// How many daily returns the figures are made of.
    let days: Int
    @NullEncoded var volatility: String?
    @NullEncoded var sharpe: String?
    @NullEncoded var sortino: String?
    @NullEncoded var maxDrawdown: String?
    @NullEncoded var beta: String?
    @NullEncoded var excessReturn: String?
    /// The benchmark `beta` and `excessReturn` are measured against: a symbol or `market`.
    let benchmark: String
}

/// The risk rules, over daily returns r (and a benchmark's, r_b, on the same days).
/// These are statistics of rates, not money: they are computed in binary floating point
/// (`Double`) and rounded to six places; the returns they start from are exact decimals.
/// No risk-free rate is subtracted; a year has 252 trading days.
///
/// - volatility = stdev(r) · √252, with the sample standard deviation (n − 1);
/// - sharpe = mean(r) / stdev(r) · √252;
/// - sortino = mean(r) / √(mean(min(r, 0)²)) · √252 (the downside deviation over all days);
/// - maxDrawdown = the largest fall from a peak of the time-weighted index ∏(1 + r),
///   which starts at 1, as a positive fraction;
/// - beta = cov(r, r_b) / var(r_b), over the days both have a return.
enum Risk {
    static let tradingDays = 252.0

    struct Figures: Equatable, Sendable {
        /// The mean daily return: where a ratio left undefined ranks (`ratio_rank`).
        var mean: Double?
        var volatility: Double?
        var sharpe: Double?
        var sortino: Double?
        var maxDrawdown: Double?
        var beta: Double?
    }

    /// The figures of `returns` (nil each with fewer than two), beta against `benchmark`
    /// (returns by day) where given.
    static func figures(_ returns: [(day: String, r: Double)], benchmark: [String: Double]?) -> Figures {
        let r = returns.map(\.r)
        guard r.count >= 2 else { return Figures() }
        let annual = tradingDays.squareRoot()
        let mean = r.reduce(0, +) / Double(r.count)
        let deviation = standardDeviation(r)
        let downside = (r.reduce(0) { $0 + pow(min($1, 0), 2) } / Double(r.count)).squareRoot()
        var figures = Figures(
            mean: mean,
            volatility: deviation * annual,
            sharpe: deviation > 0 ? mean / deviation * annual : nil,
            sortino: downside > 0 ? mean / downside * annual : nil,
            maxDrawdown: maxDrawdown(r)
        )
        if let benchmark {
            let pairs = returns.compactMap { point in benchmark[point.day].map { (point.r, $0) } }
            figures.beta = beta(pairs)
        }
        return figures
    }

    static func standardDeviation(_ r: [Double]) -> Double {
        let mean = r.reduce(0, +) / Double(r.count)
        return (r.reduce(0) { $0 + pow($1 - mean, 2) } / Double(r.count - 1)).squareRoot()
    }

    /// The largest fall from a peak of the index ∏(1 + r), which starts at 1.
    static func maxDrawdown(_ r: [Double]) -> Double {
        var index = 1.0, peak = 1.0, largest = 0.0
        for daily in r {
            index *= 1 + daily
            peak = max(peak, index)
            largest = max(largest, (peak - index) / peak)
        }
        return largest
    }

    /// cov(r, r_b) / var(r_b) over paired days; nil with fewer than two or a benchmark
    /// that never moved.
    static func beta(_ pairs: [(r: Double, benchmark: Double)]) -> Double? {
        guard pairs.count >= 2 else { return nil }
        let n = Double(pairs.count)
        let meanR = pairs.reduce(0) { $0 + $1.r } / n
        let meanB = pairs.reduce(0) { $0 + $1.benchmark } / n
        let covariance = pairs.reduce(0) { $0 + ($1.r - meanR) * ($1.benchmark - meanB) } / (n - 1)
        let variance = pairs.reduce(0) { $0 + pow($1.benchmark - meanB, 2) } / (n - 1)
        return variance > 0 ? covariance / variance : nil
    }

    /// A figure as the API shows it: six places, null when it has none (or is not finite).
    static func text(_ value: Double?) -> String? {
        guard let value, value.isFinite else { return nil }
        return Decimal(string: String(format: "%.6f", value))?.rate
    }
}

/// A portfolio's risk figures against a benchmark, over the same value history as its
/// returns (`PerformanceService`).
struct RiskService: Sendable {
    let history: ValueHistoryService
    let benchmarks: BenchmarkStore
    let market: MarketStore

    func risk(userID: Int, portfolioID: Int, from: String?, to: String?, benchmark rawBenchmark: String?) async throws -> RiskReport {
        let league = try await benchmarks.market(ofPortfolio: portfolioID)
        let benchmark = try await BenchmarkStore.named(rawBenchmark ?? "market", in: market, league: league)
        let (_, values) = try await history.values(userID: userID, portfolioID: portfolioID, from: from, to: to, interval: .day)
        let returns = Returns.daily(values)
        var report = RiskReport(from: values.first?.day, to: values.last?.day, days: returns.count, benchmark: Symbol.shown(benchmark))
        guard returns.count >= 2, let first = values.first?.day, let last = values.last?.day else { return report }
        let daily = try await benchmarks.dailyReturns(symbol: benchmark == "market" ? nil : benchmark, from: first, to: last, market: league)
        let figures = Risk.figures(returns.map { ($0.day, NSDecimalNumber(decimal: $0.r).doubleValue) }, benchmark: daily)
        report.volatility = Risk.text(figures.volatility)
        report.sharpe = Risk.text(figures.sharpe)
        report.sortino = Risk.text(figures.sortino)
        report.maxDrawdown = Risk.text(figures.maxDrawdown)
        report.beta = Risk.text(figures.beta)
        if let twr = Returns.timeWeighted(values), let theirs = try await benchmarks.totalReturn(benchmark, from: first, to: last, market: league) {
            report.excessReturn = (twr - theirs).rate
        }
        return report
    }
}
