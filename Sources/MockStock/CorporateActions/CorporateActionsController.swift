import Foundation
import Hummingbird

/// Splits and dividends: a stock's list for everyone, new ones from admins.
struct CorporateActionsController {
    let store: CorporateActionStore
    let market: MarketStore
    let quotes: any QuoteProvider

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("stock/{symbol}/corporate-actions", use: list)
        api.group("admin").add(middleware: AdminOnlyMiddleware()).post("corporate-actions", use: add)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> CorporateActionList {
        let symbol = try Symbol.known(context)
        guard try await market.instrument(symbol) != nil else { throw MarketError.unknownSymbol(symbol) }
        let limit = try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        return CorporateActionList(items: try await store.actions(symbol: symbol, through: try await quotes.historyEnd(), limit: limit))
    }

    @Sendable func add(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<CorporateAction> {
        let input = try await request.decodeJSON(as: CorporateActionInput.self, context: context)
        return EditedResponse(status: .created, response: try await store.add(NewCorporateAction(input), audit: context.actor().event(.adminCorporateAction)))
    }
}
