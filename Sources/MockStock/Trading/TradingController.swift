import Foundation
import HTTPTypes
import Hummingbird

/// Portfolios, buying and selling, and the history of trades and cash movements.
struct TradingController {
    let trading: TradingService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("portfolios", use: portfolios)
        api.get("portfolio", use: portfolio)
        api.post("stock/buy") { request, context in try await trade(.buy, request, context) }
        api.post("stock/sell") { request, context in try await trade(.sell, request, context) }
        api.get("transactions", use: transactions)
        api.get("transactions.csv") { request, context in try await transactionsCSV(request, context) }
        api.get("cash-movements", use: cashMovements)
        api.get("activities", use: activities)
    }

    struct TradeRequest: Decodable {
        let symbol: String
        let amount: ShareQuantity
        let portfolioId: Int?
        /// A past day (`YYYY-MM-DD`): a back-dated trade in a practice portfolio.
        let at: String?
        /// The trader's journal note (at most 500 characters).
        let note: String?
    }

    @Sendable func portfolios(_ request: Request, context: AppRequestContext) async throws -> [PortfolioSummary] {
        try await trading.portfolios(userID: context.requireIdentity().userID).map(PortfolioSummary.init)
    }

    @Sendable func portfolio(_ request: Request, context: AppRequestContext) async throws -> Portfolio {
        Portfolio(try await trading.portfolio(
            userID: context.requireIdentity().userID, id: try request.positiveInteger("portfolioId"), dayChange: true
        ))
    }

    func trade(_ side: TradeSide, _ request: Request, _ context: AppRequestContext) async throws -> TradeResult {
        let identity = try context.requireIdentity()
        let key = request.headers[.idempotencyKey]
        if let key { try TextInput.check(key, field: "Idempotency-Key", length: 1...255, use: .privateToSender) }
        let body = try await request.decodeJSON(as: TradeRequest.self, context: context)
        return try await trading.trade(
            side, userID: identity.userID, symbol: body.symbol, quantity: body.amount.value,
            portfolioID: body.portfolioId, at: body.at, note: body.note, idempotencyKey: key
        )
    }

    @Sendable func transactions(_ request: Request, context: AppRequestContext) async throws -> Response {
        if request.headers[.accept]?.contains("text/csv") == true {
            return try await transactionsCSV(request, context)
        }
        let page = try await trading.trades(
            userID: context.requireIdentity().userID, portfolioID: try request.positiveInteger("portfolioId"),
            symbol: request.uri.queryParameters.get("symbol"), before: try request.positiveInteger("before"),
            limit: try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        )
        return try page.response(from: request, context: context)
    }

    /// The whole history of a portfolio as CSV, streamed a page at a time.
    func transactionsCSV(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        let userID = try context.requireIdentity().userID
        let portfolioID = try request.positiveInteger("portfolioId")
        let symbol = request.uri.queryParameters.get("symbol")
        // Fail before the body starts, while an error can still be a problem+json answer.
        let first = try await trading.trades(userID: userID, portfolioID: portfolioID, symbol: symbol, before: nil, limit: 1000)
        let trading = self.trading
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "id,portfolioId,symbol,side,quantity,price,amount,fee,createdAt\n"))
            var page = first
            let formatter = ISO8601DateFormatter()
            while true {
                let lines = page.items.map {
                    "\($0.id),\($0.portfolioId),\($0.symbol),\($0.side.rawValue),\($0.quantity),\($0.price),\($0.amount),\($0.fee),\(formatter.string(from: $0.createdAt))\n"
                }.joined()
                try await writer.write(ByteBuffer(string: lines))
                guard let next = page.nextBefore else { break }
                page = try await trading.trades(userID: userID, portfolioID: portfolioID, symbol: symbol, before: next, limit: 1000)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: #"attachment; filename="transactions.csv""#],
            body: body
        )
    }

    @Sendable func activities(_ request: Request, context: AppRequestContext) async throws -> ActivityPage {
        try await trading.activities(
            userID: context.requireIdentity().userID, portfolioID: try request.positiveInteger("portfolioId"),
            before: request.uri.queryParameters.get("before"),
            limit: try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        )
    }

    @Sendable func cashMovements(_ request: Request, context: AppRequestContext) async throws -> CursorPage<CashMovement> {
        try await trading.cashMovements(
            userID: context.requireIdentity().userID, portfolioID: try request.positiveInteger("portfolioId"),
            before: try request.positiveInteger("before"),
            limit: try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        )
    }

}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
