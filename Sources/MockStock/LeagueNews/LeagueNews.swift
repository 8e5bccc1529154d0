import Foundation
import Hummingbird

/// A piece of league news (openapi.yaml `LeagueNews`).
struct LeagueNews: ResponseEncodable {
    let id: Int
    let title: String
    let body: String
    let createdAt: Date
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
        let actor = try context.actor()
        let league = try await league(context)
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "post news") }
        let posted = try await request.decodeJSON(as: PostRequest.self, context: context)
        let title = posted.title.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = posted.body.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(title, field: "title", length: 1...120)
        try TextInput.check(body, field: "body", length: 1...2000, use: .shownWithLines)
        return EditedResponse(status: .created, response: try await store.post(leagueID: league.id, title: title, body: body,
                                                                                             audit: actor.event(.leagueNews, league: league.id)))
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
