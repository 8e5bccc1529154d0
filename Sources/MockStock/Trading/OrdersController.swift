import Foundation
import Hummingbird

/// Placing, listing and cancelling orders.
struct OrdersController {
    let orders: OrderService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("orders", use: place)
        api.post("orders/preview", use: preview)
        api.get("orders", use: list)
        api.delete("orders", use: cancelAll)
        api.get("orders/by-client-id/{clientOrderId}", use: byClientID)
        api.get("orders/{id}", use: order)
        api.patch("orders/{id}", use: replace)
        api.delete("orders/{id}", use: cancel)
    }

    /// `201` with a new order; `200` with the earlier one when the same `clientOrderId`
    /// and body were sent before.
    @Sendable func place(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Order> {
        let identity = try context.requireIdentity()
        let ticket = try OrderTicket(try await request.decodeJSON(as: OrderRequest.self, context: context))
        let (order, created) = try await orders.place(ticket, userID: identity.userID)
        return EditedResponse(status: created ? .created : .ok, response: order)
    }

    /// What the order in the body would hold back while it rests; nothing is placed.
    @Sendable func preview(_ request: Request, context: AppRequestContext) async throws -> OrderPreview {
        let identity = try context.requireIdentity()
        let ticket = try OrderTicket(try await request.decodeJSON(as: OrderRequest.self, context: context))
        let (reservation, currency) = try await orders.hold(ticket, userID: identity.userID)
        return OrderPreview(reservedCash: reservation.cash.moneyString, reservedShares: reservation.shares, currency: currency)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> CursorPage<Order> {
        let parameters = request.uri.queryParameters
        let status = parameters.get("status") ?? "open"
        guard let listing = OrderStore.Listing(rawValue: status) else {
            throw InvalidInput("status must be open, closed or all.")
        }
        return try await orders.orders(
            userID: context.requireIdentity().userID, portfolioID: try request.positiveInteger("portfolioId"),
            listing: listing, symbol: parameters.get("symbol"), before: try request.positiveInteger("before"),
            limit: try Pagination.limit(parameters, default: 50, maximum: 200)
        )
    }

    @Sendable func order(_ request: Request, context: AppRequestContext) async throws -> Order {
        try await orders.order(userID: context.requireIdentity().userID, id: try Self.id(context))
    }

    @Sendable func byClientID(_ request: Request, context: AppRequestContext) async throws -> Order {
        let clientOrderID = context.parameters.get("clientOrderId") ?? ""
        return try await orders.order(userID: context.requireIdentity().userID, clientOrderID: clientOrderID)
    }

    /// The new order that replaced the open order `{id}` (which is now `replaced`).
    @Sendable func replace(_ request: Request, context: AppRequestContext) async throws -> Order {
        let changes = try await request.decodeJSON(as: OrderChanges.self, context: context)
        return try await orders.replace(userID: context.requireIdentity().userID, id: try Self.id(context), with: changes)
    }

    @Sendable func cancel(_ request: Request, context: AppRequestContext) async throws -> Order {
        try await orders.cancel(userID: context.requireIdentity().userID, id: try Self.id(context))
    }

    @Sendable func cancelAll(_ request: Request, context: AppRequestContext) async throws -> CanceledOrders {
        try await orders.cancelAll(userID: context.requireIdentity().userID, portfolioID: try request.positiveInteger("portfolioId"))
    }

    /// The `{id}` path parameter; anything that cannot be an order id is no order.
    private static func id(_ context: AppRequestContext) throws -> Int {
        guard let id = context.parameters.get("id").flatMap(Int.init), id > 0 else { throw TradingError.noSuchOrder }
        return id
    }
}
