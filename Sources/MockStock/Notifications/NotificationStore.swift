import Foundation
import Postgres

/// Notifications for users and broadcasts to everyone.
struct NotificationStore: Sendable {
    let pool: PostgresConnectionPool

    /// The user's own notifications and every broadcast, newest first.
    func list(userID: Int, unreadOnly: Bool, before: Int?, limit: Int) async throws -> CursorPage<Notification> {
        let rows = try await pool.query(
            """
            SELECT n.id, n.title, n.body, n.created_at, r.read_at, n.kind
            FROM notifications n
            LEFT JOIN notification_reads r ON r.notification_id = n.id AND r.user_id = \(userID)
            WHERE (n.user_id = \(userID) OR n.user_id IS NULL)
              AND (\(before)::int8 IS NULL OR n.id < \(before)::int8)
              AND (NOT \(unreadOnly) OR r.read_at IS NULL)
            ORDER BY n.id DESC LIMIT \(CursorPage<Notification>.rowsToRead(limit: limit))
            """
        )
        return try CursorPage(rows: rows, limit: limit, id: \.id) { row in
            let (id, title, body, createdAt, readAt, kind) = try row.decode((Int, String, String, Date, Date?, String?).self)
            return Notification(id: id, title: title, body: body, createdAt: createdAt, readAt: readAt, kind: kind)
        }
    }

    /// One notification as its addressee (or, for a broadcast, anyone) first sees it: unread.
    func notification(id: Int) async throws -> Notification? {
        try await pool.query("SELECT id, title, body, created_at, kind FROM notifications WHERE id = \(id)").first.map { row in
            let (id, title, body, createdAt, kind) = try row.decode((Int, String, String, Date, String?).self)
            return Notification(id: id, title: title, body: body, createdAt: createdAt, readAt: nil, kind: kind)
        }
    }

    /// How many of the user's notifications (broadcasts included) are unread.
    func unreadCount(userID: Int) async throws -> Int {
        try await pool.query(
            """
            SELECT count(*) FROM notifications n
            WHERE (n.user_id = \(userID) OR n.user_id IS NULL)
              AND NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = \(userID))
            """
        ).decodeColumn(Int.self)[0]
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

    /// Marks every notification of the user's (broadcasts included) that is unread read, in
    /// one statement; how many it marked.
    func markAllRead(userID: Int) async throws -> Int {
        try await pool.query(
            """
            WITH marked AS (
                INSERT INTO notification_reads (notification_id, user_id)
                SELECT n.id, \(userID) FROM notifications n
                WHERE (n.user_id = \(userID) OR n.user_id IS NULL)
                  AND NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.notification_id = n.id AND r.user_id = \(userID))
                ON CONFLICT DO NOTHING
                RETURNING 1
            )
            SELECT count(*) FROM marked
            """
        ).decodeColumn(Int.self)[0]
    }

    func broadcast(title: String, body: String, audit: AuditEntry) async throws -> Notification {
        try await pool.withTransaction { session in
            let row = try await session.query(
                "SELECT n.id, n.created_at FROM notify(NULL, \(title), \(body)) n"
            )[0]
            let (id, createdAt) = try row.decode((Int, Date).self)
            var audit = audit
            audit.details["notificationId"] = .number(id)
            try await AuditStore.record(audit, in: session)
            return Notification(id: id, title: title, body: body, createdAt: createdAt, readAt: nil)
        }
    }
}
