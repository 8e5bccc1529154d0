import Foundation
import Postgres

/// League news: what the host posts to the league. Posting writes the news and a
/// notification to every member in one transaction (so members see it live, on the
/// stream's notifications); members and the host read it newest first.
struct LeagueNewsStore: Sendable {
    let pool: PostgresConnectionPool

    func post(leagueID: Int, title: String, body: String, audit: AuditEntry) async throws -> LeagueNews {
        try await pool.withTransaction { session in
            let row = try await session.query(
                """
                INSERT INTO league_news (league_id, title, body) VALUES (\(leagueID), \(title), \(body))
                RETURNING id, title, body, created_at
                """
            )[0]
            let (id, title, body, createdAt) = try row.decode((Int, String, String, Date).self)
            try await session.execute(
                "SELECT notify_members(l.id, l.name || ': ' || \(title), \(body)) FROM leagues l WHERE l.id = \(leagueID)"
            )
            var audit = audit
            audit.details["newsId"] = .number(id)
            try await AuditStore.record(audit, in: session)
            return LeagueNews(id: id, title: title, body: body, createdAt: createdAt)
        }
    }

    func news(leagueID: Int, before: Int?, limit: Int) async throws -> [LeagueNews] {
        try await pool.query(
            """
            SELECT id, title, body, created_at FROM league_news
            WHERE league_id = \(leagueID) AND (\(before)::int8 IS NULL OR id < \(before)::int8)
            ORDER BY id DESC LIMIT \(limit)
            """
        ).decode((Int, String, String, Date).self).map { LeagueNews(id: $0.0, title: $0.1, body: $0.2, createdAt: $0.3) }
    }
}
