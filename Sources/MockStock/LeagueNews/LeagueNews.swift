import Foundation
import Hummingbird
import Postgres

/// A piece of league news (openapi.yaml `LeagueNews`).
struct LeagueNews: ResponseEncodable {
    let id: Int
    let title: String
    let body: String
    let createdAt: Date
}

/// League news: what the host posts to the league. Posting writes the news and a
/// notification to every member in one transaction (so members see it live, on the
/// stream's notifications); members and the host read it newest first.
struct LeagueNewsStore: Sendable {
    let pool: PostgresConnectionPool

    func post(leagueID: Int, title: String, body: String) async throws -> LeagueNews {
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

/// `POST /api/leagues/{id}/news` (the host) and `GET /api/leagues/{id}/news` (members and host).
struct LeagueNewsController {
    let leagues: LeagueService
    let store: LeagueNewsStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("leagues/{id}/news", use: post)
        api.get("leagues/{id}/news", use: list)
    }

    struct PostRequest: Decodable {
        let title: String
        let body: String
    }

    @Sendable func post(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<LeagueNews> {
        let caller = try context.requireIdentity().userID
        let league = try await league(context)
        guard league.ownerID == caller else { throw LeagueError.ownerOnly(action: "post news") }
        let posted = try await request.decodeJSON(as: PostRequest.self, context: context)
        let title = posted.title.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = posted.body.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(title, field: "title", length: 1...120)
        try TextInput.check(body, field: "body", length: 1...2000, use: .shownWithLines)
        return EditedResponse(status: .created, response: try await store.post(leagueID: league.id, title: title, body: body))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> CursorPage<LeagueNews> {
        let league = try await league(context)
        let limit = try Pagination.limit(request.uri.queryParameters, default: 20, maximum: 100)
        let rows = try await store.news(leagueID: league.id, before: try request.positiveInteger("before"),
                                        limit: CursorPage<LeagueNews>.rowsToRead(limit: limit))
        return CursorPage(rows: rows, limit: limit, id: \.id) { $0 }
    }

    /// The `{id}` league if the caller plays in it or hosts it.
    private func league(_ context: AppRequestContext) async throws -> LeagueStore.LeagueRecord {
        guard let id = context.parameters.get("id").flatMap(Int.init) else { throw LeagueError.noSuchLeague }
        return try await leagues.league(id: id, member: try context.requireIdentity().userID)
    }
}
