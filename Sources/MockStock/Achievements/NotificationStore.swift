import Foundation
import Hummingbird
import Postgres

/// A notification as clients see it.
struct Notification: ResponseEncodable, Sendable {
    let id: Int
    let title: String
    let body: String
    let createdAt: Date
    @NullEncoded var readAt: Date?
}

/// Notifications for users and broadcasts to everyone.
struct NotificationStore: Sendable {
    let pool: PostgresConnectionPool

    /// The user's own notifications and every broadcast, newest first.
    func list(userID: Int, unreadOnly: Bool, before: Int?, limit: Int) async throws -> CursorPage<Notification> {
        let rows = try await pool.query(
            """
            SELECT n.id, n.title, n.body, n.created_at, r.read_at
            FROM notifications n
            LEFT JOIN notification_reads r ON r.notification_id = n.id AND r.user_id = \(userID)
            WHERE (n.user_id = \(userID) OR n.user_id IS NULL)
              AND (\(before)::int8 IS NULL OR n.id < \(before)::int8)
              AND (NOT \(unreadOnly) OR r.read_at IS NULL)
            ORDER BY n.id DESC LIMIT \(limit + 1)
            """
        )
        let items = try rows.prefix(limit).map { row in
            let (id, title, body, createdAt, readAt) = try row.decode((Int, String, String, Date, Date?).self)
            return Notification(id: id, title: title, body: body, createdAt: createdAt, readAt: readAt)
        }
        return CursorPage(items: items, nextBefore: rows.count > limit ? items.last?.id : nil)
    }

    /// Marks one of the user's notifications (or a broadcast) read; false when it is not theirs.
    func markRead(id: Int, userID: Int) async throws -> Bool {
        let visible = try await pool.query(
            """
            WITH visible AS (
                SELECT id FROM notifications WHERE id = \(id) AND (user_id = \(userID) OR user_id IS NULL)
            ), marked AS (
                INSERT INTO notification_reads (notification_id, user_id) SELECT id, \(userID) FROM visible
                ON CONFLICT DO NOTHING
            )
            SELECT count(*) FROM visible
            """
        ).decodeColumn(Int.self)
        return visible == [1]
    }

    func broadcast(title: String, body: String) async throws -> Notification {
        let row = try await pool.query(
            "INSERT INTO notifications (user_id, title, body) VALUES (NULL, \(title), \(body)) RETURNING id, created_at"
        )[0]
        let (id, createdAt) = try row.decode((Int, Date).self)
        return Notification(id: id, title: title, body: body, createdAt: createdAt, readAt: nil)
    }
}

/// Listing notifications and marking them read.
struct NotificationController {
    let store: NotificationStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("notifications", use: list)
        api.post("notifications/{id}/read", use: markRead)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> CursorPage<Notification> {
        let parameters = request.uri.queryParameters
        let unread = parameters.get("unread")
        guard unread == nil || unread == "true" || unread == "false" else {
            throw AppError.validationFailed("unread must be true or false.")
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
        else { throw AppError.notFound("No such notification of yours.") }
        return .noContent
    }
}
