import Foundation
import Hummingbird

/// Listing notifications and marking them read.
struct NotificationController {
    let store: NotificationStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("notifications", use: list)
        api.post("notifications/{id}/read", use: markRead)
        api.post("notifications/read", use: markAllRead)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> CursorPage<Notification> {
        let parameters = request.uri.queryParameters
        let unread = parameters.get("unread")
        guard unread == nil || unread == "true" || unread == "false" else {
            throw InvalidInput("unread must be true or false.")
        }
        return try await store.list(
            userID: context.requireIdentity().userID, unreadOnly: unread == "true",
            before: try request.positiveInteger("before"),
            limit: try Pagination.limit(parameters, default: 50, maximum: 200)
        )
    }

    @Sendable func markRead(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        guard let id = context.parameters.get("id").flatMap(Int.init),
            try await store.markRead(id: id, userID: context.requireIdentity().userID)
        else { throw NotificationError.noSuchNotification }
        return .noContent
    }

    /// Marks every unread notification of the caller read, broadcasts included.
    @Sendable func markAllRead(_ request: Request, context: AppRequestContext) async throws -> NotificationsMarked {
        NotificationsMarked(marked: try await store.markAllRead(userID: context.requireIdentity().userID))
    }
}
