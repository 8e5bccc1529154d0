import Foundation
import HTTPTypes
import Hummingbird

/// Authenticates `/v2`, the Alpaca-compatible API: an API key's `APCA-API-KEY-ID` and
/// `APCA-API-SECRET-KEY` headers (the key's portfolio is the account), or a bearer token
/// (the personal portfolio). Each key's requests count against `BOT_RATE_LIMIT_PER_MINUTE`,
/// shared by every server process (`BotBudgets`).
struct BotAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    static let keyIDHeader = HTTPField.Name("APCA-API-KEY-ID")!
    static let secretHeader = HTTPField.Name("APCA-API-SECRET-KEY")!

    let keys: ApiKeyService
    let auth: AuthMiddleware
    let budgets: BotBudgets

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let keyID = request.headers[Self.keyIDHeader] else {
            // A bearer token acts for the personal portfolio.
            return try await auth.handle(request, context: context, next: next)
        }
        guard let secret = request.headers[Self.secretHeader],
              let holder = try await keys.holder(keyID: keyID, secret: secret)
        else {
            throw AppError.unauthorized("request is not authorized: unknown key id, wrong secret, or a revoked key")
        }
        // Checked on every request (through the key cache), so a league's change of policy
        // stops keys made before it.
        guard !holder.forbidden else { throw ApiKeyError.botsForbidden }
        if let wait = try await budgets.spend(keyID: keyID) {
            throw AppError.rateLimited(retryAfter: wait, "rate limit exceeded: \(budgets.requestsPerMinute) requests a minute per key")
        }
        var context = context
        context.identity = Identity(userID: holder.userID, role: holder.role)
        context.botPortfolioID = holder.portfolioID
        context.logger[metadataKey: "user_id"] = .stringConvertible(holder.userID)
        return try await next(request, context)
    }
}
