import Foundation
import Hummingbird
import Postgres

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

/// The notes on the orders and trades of a league's portfolios, newest first: the ones
/// every member plays (`league_portfolios`, archived ones included: a reset keeps its
/// history), written since the portfolio plays there (a shared league's member's personal
/// notes from before they joined are not the league's). Every note is on an order row: a
/// plain trade with a note is written with one.
struct JournalStore: Sendable {
    let pool: PostgresConnectionPool

    func entries(leagueID: Int, userID: Int?, before: Int?, limit: Int) async throws -> [JournalEntry] {
        try await pool.query(
            """
            SELECT o.user_id, u.username, o.id, o.symbol, o.side, o.quantity, o.note, o.created_at
            FROM league_portfolios(\(leagueID)) lp
                 JOIN orders o ON o.portfolio_id = lp.portfolio_id AND o.note IS NOT NULL AND o.created_at >= lp.since
                 JOIN users u ON u.id = o.user_id
            WHERE (\(userID)::int8 IS NULL OR lp.user_id = \(userID)::int8)
              AND (\(before)::int8 IS NULL OR o.id < \(before)::int8)
            ORDER BY o.id DESC LIMIT \(limit)
            """
        ).decode((Int, String, Int, String, TradeSide, Int, String, Date).self).map {
            JournalEntry(userId: $0.0, username: $0.1, orderId: $0.2, symbol: $0.3, side: $0.4, quantity: $0.5, note: $0.6, createdAt: $0.7)
        }
    }
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
