import Foundation
import Postgres

/// The audit log (`audit_events`): written in the transaction of each audited action,
/// never changed after, read newest first by a league's host and by admins.
struct AuditStore: Sendable {
    let pool: PostgresConnectionPool

    /// Writes the event inside the action's transaction (`session`).
    static func record(_ entry: AuditEntry, in session: PostgresSession) async throws {
        try await session.execute(insert(entry))
    }

    /// Writes the event of an action that changes nothing else (a download).
    func record(_ entry: AuditEntry) async throws {
        try await pool.execute(Self.insert(entry))
    }

    private static func insert(_ entry: AuditEntry) -> PostgresQuery {
        """
        INSERT INTO audit_events (actor_id, action, league_id, target_user_id, details, request_id)
        VALUES (\(entry.actorID), \(entry.action.rawValue), \(entry.leagueID), \(entry.targetUserID), \(entry.detailsJSON)::jsonb,
                \(entry.requestID))
        """
    }

    /// Which events to read; nil fields do not filter.
    struct Filter: Sendable {
        var leagueID: Int?
        var actorID: Int?
        var action: AuditAction?
    }

    /// Up to `limit` events below `before`, newest first.
    func events(_ filter: Filter, before: Int?, limit: Int) async throws -> [AuditEvent] {
        try await pool.query(
            """
            SELECT e.id, e.at, e.actor_id, u.username, e.action, e.league_id, e.target_user_id, e.details::text, e.request_id
            FROM audit_events e LEFT JOIN users u ON u.id = e.actor_id
            WHERE (\(filter.leagueID)::int8 IS NULL OR e.league_id = \(filter.leagueID))
              AND (\(filter.actorID)::int8 IS NULL OR e.actor_id = \(filter.actorID))
              AND (\(filter.action?.rawValue)::text IS NULL OR e.action = \(filter.action?.rawValue))
              AND (\(before)::int8 IS NULL OR e.id < \(before))
            ORDER BY e.id DESC
            LIMIT \(limit)
            """
        ).decode((Int, Date, Int, String?, String, Int?, Int?, String, String?).self).map { row in
            AuditEvent(id: row.0, at: row.1, actorId: row.2, actorUsername: row.3, action: row.4, leagueId: row.5, targetUserId: row.6,
                       details: StoredJSON(text: row.7), requestId: row.8)
        }
    }
}
