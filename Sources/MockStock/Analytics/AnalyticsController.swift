import Foundation
import Hummingbird

/// Figures about a portfolio's past: its value over time.
struct AnalyticsController {
    let history: ValueHistoryService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("portfolios/{id}/history", use: valueHistory)
    }

    /// `?from=&to=` (days, default: the portfolio's creation to today), `interval=day|week|month`.
    @Sendable func valueHistory(_ request: Request, context: AppRequestContext) async throws -> ValueHistory {
        let parameters = request.uri.queryParameters
        guard let id = context.parameters.get("id").flatMap(Int.init), id > 0 else { throw TradingError.noSuchPortfolio }
        let from = try Self.day(parameters.get("from"), "from")
        let to = try Self.day(parameters.get("to"), "to")
        if let from, let to, from > to { throw InvalidInput("from must not be after to.") }
        guard let interval = HistoryInterval(rawValue: parameters.get("interval") ?? "day") else {
            throw InvalidInput("interval must be day, week or month.")
        }
        if let currency = parameters.get("currency"), currency != "USD" {
            throw InvalidInput("currency must be USD: values in other currencies are not served yet.")
        }
        return try await history.history(userID: context.requireIdentity().userID, portfolioID: id, from: from, to: to, interval: interval)
    }

    static func day(_ text: String?, _ name: String) throws -> String? {
        guard let text else { return nil }
        guard CalendarDay.isValid(text) else { throw InvalidInput("\(name) must be a day, YYYY-MM-DD.") }
        return text
    }
}
