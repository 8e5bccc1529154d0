import Foundation
import Hummingbird

/// The audit log's two readers: a league's host (their league's events) and admins
/// (everything, filtered by action, actor and league).
struct AuditController {
    let store: AuditStore
    let leagues: LeagueService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("leagues/{id}/audit", use: league)
        api.group("admin").add(middleware: AdminOnlyMiddleware()).get("audit", use: all)
    }

    @Sendable func league(_ request: Request, context: AppRequestContext) async throws -> CursorPage<AuditEvent> {
        let caller = try context.requireIdentity().userID
        let league = try await leagues.memberLeague(context)
        guard league.ownerID == caller else { throw LeagueError.ownerOnly(action: "read its audit log") }
        return try await page(AuditStore.Filter(leagueID: league.id), request)
    }

    @Sendable func all(_ request: Request, context: AppRequestContext) async throws -> CursorPage<AuditEvent> {
        let action = try request.uri.queryParameters.get("action").map { text in
            guard let action = AuditAction(rawValue: text) else {
                throw InvalidInput("action must be one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return action
        }
        return try await page(
            AuditStore.Filter(leagueID: try request.positiveInteger("leagueId"), actorID: try request.positiveInteger("actorId"), action: action),
            request
        )
    }

    private func page(_ filter: AuditStore.Filter, _ request: Request) async throws -> CursorPage<AuditEvent> {
        let limit = try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        let rows = try await store.events(filter, before: try request.positiveInteger("before"),
                                          limit: CursorPage<AuditEvent>.rowsToRead(limit: limit))
        return CursorPage(rows: rows, limit: limit, id: \.id) { $0 }
    }
}

extension AppRequestContext {
    /// The caller as the audit log names them, with this request's id.
    func actor() throws -> Actor {
        Actor(userID: try requireIdentity().userID, requestID: requestID.isEmpty ? nil : requestID)
    }
}
