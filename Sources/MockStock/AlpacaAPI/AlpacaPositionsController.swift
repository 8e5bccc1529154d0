import Foundation
import Hummingbird

/// Positions under `/v2`: the key's portfolio's holdings, valued as `/api/portfolio`
/// values them, and closed by market orders through the same order engine.
struct AlpacaPositionsController {
    let trading: TradingService
    let orders: OrderService
    let alpaca: AlpacaStore
    /// Which market a key's portfolio trades in (a scenario league's own names its assets).
    let rules: TradingRulesBook

    func addRoutes(to v2: RouterGroup<AppRequestContext>) {
        v2.get("positions", use: positions)
        v2.delete("positions", use: closeAll)
        v2.get("positions/{symbolOrId}", use: position)
        v2.delete("positions/{symbolOrId}", use: close)
    }

    @Sendable func positions(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaPosition]> {
        try AlpacaController.refuseParameters(request, except: [])
        return AlpacaResponse(try await current(context))
    }

    @Sendable func position(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaPosition> {
        try AlpacaController.refuseParameters(request, except: [])
        return AlpacaResponse(try await held(context))
    }

    /// Closes all of a position, `qty` shares of it, or `percentage` of it (rounded down to
    /// whole shares) with a market order; answers that order.
    @Sendable func close(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaOrder> {
        try AlpacaController.refuseParameters(request, except: ["qty", "percentage"])
        let position = try await held(context)
        let held = abs(Int(position.qty) ?? 0)
        let parameters = request.uri.queryParameters
        let quantity: Int
        switch (parameters.get("qty"), parameters.get("percentage")) {
        case (nil, nil):
            quantity = held
        case (let qty?, nil):
            guard let whole = Int(qty), whole >= 1 else { throw InvalidInput("qty must be a whole number of shares.") }
            guard whole <= held else { throw TradingError.insufficientShares }
            quantity = whole
        case (nil, let percentage?):
            guard let share = Decimal(exactly: percentage), share > 0, share <= 100 else {
                throw InvalidInput("percentage must be above 0 and at most 100.")
            }
            var exact = Decimal(held) * share / 100
            var whole = Decimal()
            NSDecimalRound(&whole, &exact, 0, .down)
            quantity = NSDecimalNumber(decimal: whole).intValue
            guard quantity >= 1 else { throw InvalidInput("\(percentage) % of \(held) shares is less than one whole share.") }
        default:
            throw InvalidInput("Send qty or percentage, not both.")
        }
        let order = try await closeOrder(symbol: position.symbol, long: position.side == "long", quantity: quantity, context: context)
        return AlpacaResponse(order)
    }

    /// Closes every position with market orders (cancelling open orders first when
    /// `cancel_orders=true`): `207`, one entry per position.
    @Sendable func closeAll(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaClosedPosition]> {
        try AlpacaController.refuseParameters(request, except: ["cancel_orders"])
        switch request.uri.queryParameters.get("cancel_orders") {
        case nil, "false", "False": break
        case "true", "True":
            _ = try await orders.cancelAll(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID)
        default: throw InvalidInput("cancel_orders must be true or false.")
        }
        var closed: [AlpacaClosedPosition] = []
        for position in try await current(context) {
            let order = try await closeOrder(
                symbol: position.symbol, long: position.side == "long", quantity: abs(Int(position.qty) ?? 0), context: context
            )
            closed.append(AlpacaClosedPosition(orderId: order.id, status: 200, symbol: position.symbol, body: order))
        }
        return AlpacaResponse(closed, status: .init(code: 207, reasonPhrase: "Multi-Status"))
    }

    // MARK: Helpers

    private func closeOrder(symbol: String, long: Bool, quantity: Int, context: AppRequestContext) async throws -> AlpacaOrder {
        var ticket = try OrderTicket(OrderRequest(
            symbol: symbol, side: long ? "sell" : "buy", quantity: try ShareQuantity(quantity), type: "market", limitPrice: nil,
            stopPrice: nil, timeInForce: "day", clientOrderId: UUID().uuidString.lowercased(), portfolioId: context.botPortfolioID
        ))
        ticket.journalExempt = true
        ticket.byKey = context.botPortfolioID != nil
        let (order, _) = try await orders.place(ticket, userID: context.requireIdentity().userID)
        return AlpacaOrder(order)
    }

    /// The position named by the path (a symbol or an asset's UUID): 404 when none is held.
    private func held(_ context: AppRequestContext) async throws -> AlpacaPosition {
        let key = context.parameters.get("symbolOrId") ?? ""
        let market = try await rules.rules(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID).market
        guard key.count <= 36, !Symbol.isLeagues(key), let asset = try await alpaca.asset(symbolOrID: key, league: market),
              let position = try await current(context).first(where: { $0.symbol == Symbol.shown(asset.symbol) })
        else { throw AppError.notFound("position does not exist") }
        return position
    }

    private func current(_ context: AppRequestContext) async throws -> [AlpacaPosition] {
        let portfolio = try await trading.portfolio(
            userID: context.requireIdentity().userID, id: context.botPortfolioID, dayChange: true, polled: true
        )
        return portfolio.holdings.map { holding in
            let (price, value, gain, dayChange) = (holding.price, holding.value, holding.unrealizedGain, holding.dayChange)
            let costBasis = value - gain
            let lastPrice = holding.previousPrice ?? price
            let lastValue = value - dayChange
            return AlpacaPosition(
                assetId: holding.assetID, symbol: Symbol.shown(holding.symbol), avgEntryPrice: holding.averageCost.moneyString,
                qty: String(holding.quantity), side: holding.quantity > 0 ? "long" : "short",
                marketValue: value.moneyString, costBasis: costBasis.moneyString, unrealizedPl: gain.moneyString,
                unrealizedPlpc: AlpacaPosition.rate(gain, over: costBasis), unrealizedIntradayPl: dayChange.moneyString,
                unrealizedIntradayPlpc: AlpacaPosition.rate(dayChange, over: lastValue), currentPrice: price.moneyString,
                lastdayPrice: lastPrice.rounded(4).moneyString, changeToday: AlpacaPosition.rate(price - lastPrice, over: lastPrice)
            )
        }
    }
}
