import Foundation
import Hummingbird

/// Orders under `/v2`: placed, listed and cancelled through the same `OrderService`
/// (rules, reservations, matching, ledger) as `/api/orders`, in the key's portfolio.
struct AlpacaOrdersController {
    let orders: OrderService
    let store: OrderStore
    let trading: TradingStore

    func addRoutes(to v2: RouterGroup<AppRequestContext>) {
        v2.post("orders", use: place)
        v2.get("orders", use: list)
        v2.delete("orders", use: cancelAll)
        v2.get("orders:by_client_order_id", use: byClientOrderID)
        v2.get("orders/{orderId}", use: order)
        v2.patch("orders/{orderId}", use: replace)
        v2.delete("orders/{orderId}", use: cancel)
    }

    @Sendable func place(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaOrder> {
        try AlpacaController.refuseParameters(request, except: [])
        let alpaca = try await Self.body(request, as: AlpacaOrderRequest.self, fields: AlpacaOrderRequest.fields)
        if alpaca.notional != nil {
            throw InvalidInput("notional orders need fractional shares, which this game does not have: send qty, a whole number of shares.")
        }
        guard let qty = alpaca.qty else { throw InvalidInput("qty is required.") }
        if alpaca.extendedHours == true { throw InvalidInput("extended_hours is not supported: orders trade in the regular session.") }
        if ["opg", "cls"].contains(alpaca.timeInForce) {
            throw InvalidInput("time_in_force \(alpaca.timeInForce) is not supported: use day, gtc, ioc or fok.")
        }
        var ticket = try OrderTicket(OrderRequest(
            symbol: alpaca.symbol, side: alpaca.side, quantity: qty, type: alpaca.type, limitPrice: alpaca.limitPrice,
            stopPrice: alpaca.stopPrice, trailPercent: alpaca.trailPercent, trailPrice: alpaca.trailPrice, timeInForce: alpaca.timeInForce,
            // Alpaca gives every order a client order id; so do we.
            clientOrderId: alpaca.clientOrderId ?? UUID().uuidString.lowercased(), portfolioId: context.botPortfolioID,
            orderClass: alpaca.orderClass.flatMap { $0.isEmpty ? nil : $0 }, takeProfit: alpaca.takeProfit, stopLoss: alpaca.stopLoss
        ))
        // A bot keeps no journal: no league's journal rule applies under /v2.
        ticket.journalExempt = true
        ticket.byKey = context.botPortfolioID != nil
        do {
            let (order, _) = try await orders.place(ticket, userID: context.requireIdentity().userID)
            return AlpacaResponse(AlpacaOrder(order))
        } catch MarketError.unknownSymbol(let symbol) {
            throw InvalidInput("asset \(symbol) not found")
        }
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaOrder]> {
        try AlpacaController.refuseParameters(request, except: ["status", "limit", "after", "until", "direction", "nested", "symbols", "side"])
        let parameters = request.uri.queryParameters
        guard let listing = OrderStore.Listing(rawValue: parameters.get("status") ?? "open") else {
            throw InvalidInput("status must be open, closed or all.")
        }
        let limit = try parameters.get("limit").map {
            guard let limit = Int($0), (1...500).contains(limit) else { throw InvalidInput("limit must be from 1 to 500.") }
            return limit
        } ?? 50
        let direction = parameters.get("direction") ?? "desc"
        guard ["asc", "desc"].contains(direction) else { throw InvalidInput("direction must be asc or desc.") }
        if let nested = parameters.get("nested"), !["true", "false", "True", "False"].contains(nested) {
            throw InvalidInput("nested must be true or false.")
        }
        let side = try parameters.get("side").map {
            guard let side = TradeSide(rawValue: $0) else { throw InvalidInput("side must be buy or sell.") }
            return side
        }
        let symbols = parameters.get("symbols").map { $0.split(separator: ",").map { Symbol.normalize(String($0)) } }
        if let symbols, symbols.count > 1000 || symbols.contains(where: { !Symbol.isValid($0) }) {
            throw InvalidInput("symbols must be a comma-separated list of symbols.")
        }
        let portfolio = try await portfolioID(context)
        let market = try await orders.market(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID)
        let records = try await store.orders(
            portfolioID: portfolio, listing: listing, symbols: symbols?.map { Symbol.stored($0, inLeague: market) }, side: side,
            after: try Self.moment(parameters.get("after"), "after"), until: try Self.moment(parameters.get("until"), "until"),
            ascending: direction == "asc", limit: limit
        )
        // Nested: legs only under their parents (every order carries its legs either way).
        let nested = ["true", "True"].contains(parameters.get("nested") ?? "")
        return AlpacaResponse(records.filter { !nested || $0.parentID == nil }.map { AlpacaOrder(Order($0)) })
    }

    @Sendable func order(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaOrder> {
        try AlpacaController.refuseParameters(request, except: ["nested"])
        return AlpacaResponse(AlpacaOrder(try await find(context)))
    }

    @Sendable func byClientOrderID(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaOrder> {
        try AlpacaController.refuseParameters(request, except: ["client_order_id"])
        guard let clientOrderID = request.uri.queryParameters.get("client_order_id"), !clientOrderID.isEmpty, clientOrderID.count <= 128 else {
            throw InvalidInput("client_order_id is required.")
        }
        let order = try await orders.order(userID: context.requireIdentity().userID, clientOrderID: clientOrderID)
        guard order.portfolioId == (try await portfolioID(context)) else { throw TradingError.noSuchOrder }
        return AlpacaResponse(AlpacaOrder(order))
    }

    /// The new order, which names the one it replaced (now `replaced`); an order no
    /// longer open is `422`.
    @Sendable func replace(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaOrder> {
        try AlpacaController.refuseParameters(request, except: [])
        let body = try await Self.body(request, as: AlpacaReplaceRequest.self, fields: AlpacaReplaceRequest.fields)
        let order = try await find(context)
        let changes = try body.changes(to: order)
        let replacement = try await orders.replace(userID: context.requireIdentity().userID, id: order.id, with: changes)
        return AlpacaResponse(AlpacaOrder(replacement))
    }

    /// `204`; an order no longer open is `422`.
    @Sendable func cancel(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try AlpacaController.refuseParameters(request, except: [])
        let order = try await find(context)
        _ = try await orders.cancel(userID: context.requireIdentity().userID, id: order.id)
        return .noContent
    }

    /// `207` with each open order cancelled.
    @Sendable func cancelAll(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaCanceledOrder]> {
        try AlpacaController.refuseParameters(request, except: [])
        let canceled = try await orders.cancelAll(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID).canceled
        let shaped = canceled.map(AlpacaOrder.init).map { AlpacaCanceledOrder(id: $0.id, status: 200, body: $0) }
        return AlpacaResponse(shaped, status: .init(code: 207, reasonPhrase: "Multi-Status"))
    }

    // MARK: Helpers

    /// A JSON object body in Alpaca's snake_case, refusing any field not in `fields`.
    private static func body<Body: Decodable>(_ request: Request, as type: Body.Type, fields known: Set<String>) async throws -> Body {
        let body = Data(buffer: try await request.body.collect(upTo: AppRequestContext.maxBodySize))
        guard let fields = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw AppError.badRequest("request body format is invalid")
        }
        if let unsupported = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw InvalidInput("\(unsupported.prefix(40)) is not supported: orders here are simple (no brackets, trailing stops or options).")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Body.self, from: body)
    }

    /// The order named by the path's UUID, if it is in the request's portfolio.
    private func find(_ context: AppRequestContext) async throws -> Order {
        guard let uuid = context.parameters.get("orderId").flatMap(UUID.init(uuidString:)) else {
            throw InvalidInput("order_id is not a valid order id (a UUID).")
        }
        guard let record = try await store.order(userID: context.requireIdentity().userID, uuid: uuid),
              record.portfolioID == (try await portfolioID(context))
        else { throw TradingError.noSuchOrder }
        return Order(record)
    }

    private func portfolioID(_ context: AppRequestContext) async throws -> Int {
        guard let portfolio = try await trading.portfolio(userID: context.requireIdentity().userID, id: context.botPortfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        return portfolio.id
    }

    /// An RFC 3339 moment (fractional seconds and offsets allowed).
    static func moment(_ text: String?, _ name: String) throws -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        if CalendarDay.isValid(text) { formatter.formatOptions = [.withFullDate]; return formatter.date(from: text) }
        throw InvalidInput("\(name) must be an RFC 3339 time, like 2026-01-02T15:04:05Z.")
    }
}
