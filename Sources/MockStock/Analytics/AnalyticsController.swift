import Foundation
import Hummingbird

/// Figures about a portfolio's past (its value over time, its returns, its gains) and
/// about symbols side by side (correlation, rebased comparison).
struct AnalyticsController {
    let history: ValueHistoryService
    let performance: PerformanceService
    let profitAndLoss: ProfitAndLossService
    let comparison: ComparisonService
    let composition: CompositionService
    let risk: RiskService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("portfolios/{id}/history", use: valueHistory)
        api.get("portfolios/{id}/performance", use: returns)
        api.get("portfolios/{id}/pnl", use: pnl)
        api.get("portfolios/{id}/composition", use: allocation)
        api.get("portfolios/{id}/risk", use: riskFigures)
        api.get("analytics/correlation", use: correlation)
        api.get("analytics/compare", use: compare)
    }

    /// `?from=&to=` (days, default: the portfolio's creation to today), `interval=day|week|month`.
    @Sendable func valueHistory(_ request: Request, context: AppRequestContext) async throws -> ValueHistory {
        let parameters = request.uri.queryParameters
        let (id, from, to, currency) = try Self.range(request, context)
        guard let interval = HistoryInterval(rawValue: parameters.get("interval") ?? "day") else {
            throw InvalidInput("interval must be day, week or month.")
        }
        return try await history.history(
            userID: context.requireIdentity().userID, portfolioID: id, from: from, to: to, interval: interval, currency: currency
        )
    }

    /// `?from=&to=&benchmark=SYMBOL|market`: time- and money-weighted returns (see `Returns`).
    @Sendable func returns(_ request: Request, context: AppRequestContext) async throws -> Performance {
        let (id, from, to, currency) = try Self.range(request, context)
        let benchmark = request.uri.queryParameters.get("benchmark")
        if let benchmark, benchmark != "market", !Symbol.isValid(Symbol.normalize(benchmark)) {
            throw InvalidInput("benchmark must be a symbol or market.")
        }
        return try await performance.performance(
            userID: context.requireIdentity().userID, portfolioID: id, from: from, to: to, benchmark: benchmark, currency: currency
        )
    }

    /// `?from=&to=&benchmark=SYMBOL|market` (default market): risk and risk-adjusted figures (see `Risk`).
    @Sendable func riskFigures(_ request: Request, context: AppRequestContext) async throws -> RiskReport {
        let (id, from, to, _) = try Self.range(request, context)
        return try await risk.risk(
            userID: context.requireIdentity().userID, portfolioID: id, from: from, to: to,
            benchmark: request.uri.queryParameters.get("benchmark")
        )
    }

    /// `?method=average|fifo|lifo` (default average, as `averageCost` in the portfolio).
    @Sendable func pnl(_ request: Request, context: AppRequestContext) async throws -> ProfitAndLoss {
        let (id, _, _, currency) = try Self.range(request, context)
        guard let method = CostMethod(rawValue: request.uri.queryParameters.get("method") ?? "average") else {
            throw InvalidInput("method must be average, fifo or lifo.")
        }
        return try await profitAndLoss.profitAndLoss(
            userID: context.requireIdentity().userID, portfolioID: id, method: method, currency: currency
        )
    }

    /// `?date=` (default now)&currency=: allocation by symbol and by sector.
    @Sendable func allocation(_ request: Request, context: AppRequestContext) async throws -> Composition {
        let (id, _, _, currency) = try Self.range(request, context)
        let date = try Self.day(request.uri.queryParameters.get("date"), "date")
        return try await composition.composition(
            userID: context.requireIdentity().userID, portfolioID: id, date: date, currency: currency
        )
    }

    /// `?symbols=A,B,C&from=&to=`: the Pearson matrix of daily total returns.
    @Sendable func correlation(_ request: Request, context: AppRequestContext) async throws -> Correlation {
        let parameters = request.uri.queryParameters
        return try await comparison.correlation(
            symbols: parameters.get("symbols"), from: try Self.day(parameters.get("from"), "from"), to: try Self.day(parameters.get("to"), "to")
        )
    }

    /// `?symbols=A,B&from=&to=`: total-return series rebased to 100 at `from`.
    @Sendable func compare(_ request: Request, context: AppRequestContext) async throws -> Comparison {
        let parameters = request.uri.queryParameters
        return try await comparison.comparison(
            symbols: parameters.get("symbols"), from: try Self.day(parameters.get("from"), "from"), to: try Self.day(parameters.get("to"), "to")
        )
    }

    /// The portfolio, `from`, `to` and `currency` (nil: the portfolio's base currency) of a
    /// figures request.
    private static func range(
        _ request: Request, _ context: AppRequestContext
    ) throws -> (id: Int, from: String?, to: String?, currency: String?) {
        let parameters = request.uri.queryParameters
        guard let id = context.parameters.get("id").flatMap(Int.init), id > 0 else { throw TradingError.noSuchPortfolio }
        let from = try day(parameters.get("from"), "from")
        let to = try day(parameters.get("to"), "to")
        if let from, let to, from > to { throw InvalidInput("from must not be after to.") }
        let currency = try parameters.get("currency").map { try FxController.currency($0, "currency") }
        return (id, from, to, currency)
    }

    static func day(_ text: String?, _ name: String) throws -> String? {
        guard let text else { return nil }
        guard CalendarDay.isValid(text) else { throw InvalidInput("\(name) must be a day, YYYY-MM-DD.") }
        return text
    }
}
