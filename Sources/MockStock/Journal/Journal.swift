import Foundation
import Hummingbird

/// A trader's journal note on an order or trade: why they made it. At most 500
/// characters, the text rule of names and bodies (lines allowed, no control characters);
/// blank is no note.
enum JournalNote {
    static let maximumLength = 500

    static func parse(_ text: String?) throws -> String? {
        guard let text else { return nil }
        let note = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !note.isEmpty else { return nil }
        try TextInput.check(note, field: "note", length: 1...maximumLength, use: .shownWithLines)
        return note
    }
}

/// One note of a league's journal (openapi.yaml `JournalEntry`).
struct JournalEntry: Encodable, Sendable {
    let userId: Int
    let username: String
    let orderId: Int
    let symbol: String
    let side: TradeSide
    let quantity: Int
    let note: String
    let createdAt: Date
}

/// `GET /api/leagues/{id}/journal`: the host reads every member's notes (or one member's,
/// `userId`), a member their own only (another's is `403`).
struct JournalController {
    let leagues: LeagueService
    let store: JournalStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("leagues/{id}/journal", use: journal)
    }

    @Sendable func journal(_ request: Request, context: AppRequestContext) async throws -> CursorPage<JournalEntry> {
        let caller = try context.requireIdentity().userID
        guard let id = context.parameters.get("id").flatMap(Int.init) else { throw LeagueError.noSuchLeague }
        let league = try await leagues.league(id: id, member: caller)
        let asked = try request.positiveInteger("userId")
        let host = league.ownerID == caller
        if !host, let asked, asked != caller { throw LeagueError.ownerOnly(action: "read other members' journals") }
        let limit = try Pagination.limit(request.uri.queryParameters, default: 50, maximum: 200)
        let rows = try await store.entries(leagueID: league.id, userID: host ? asked : caller, before: try request.positiveInteger("before"),
                                           limit: CursorPage<JournalEntry>.rowsToRead(limit: limit))
        return CursorPage(rows: rows, limit: limit, id: \.orderId) { $0 }
    }
}
