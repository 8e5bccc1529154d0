import Foundation
import Postgres

/// Bot players: users with `bot_owner_id` set (`sql/migrations/0038_bot_players.sql`),
/// each with a personal portfolio funded like a new player's, and no password.
struct BotStore: Sendable {
    let pool: PostgresConnectionPool
    /// What a new player's personal portfolio starts with; a bot's is the same.
    let startingCash: Decimal

    /// A new bot of `ownerID`, with its personal portfolio; `tooManyBots` past the limit,
    /// counted under a lock of the owner's row so concurrent creations cannot both pass it.
    func create(ownerID: Int, username: String) async throws -> Bot {
        let id = try await pool.withTransaction { session in
            let owner = try await session.query("SELECT bot_owner_id IS NULL FROM users WHERE id = \(ownerID) FOR NO KEY UPDATE")
                .decodeColumn(Bool.self)
            // A bot owns no bots (it has no token to ask with; this is the rule besides).
            guard owner == [true] else { throw BotError.noSuchBot }
            let owned = try await session.query("SELECT count(*) FROM users WHERE bot_owner_id = \(ownerID)").decodeColumn(Int.self)
            guard owned.first ?? 0 < BotRules.maxPerOwner else { throw BotError.tooManyBots(limit: BotRules.maxPerOwner) }
            return try await UserStore.create(
                username: username, email: nil, passwordHash: "", role: .player, startingCash: startingCash, botOwnerID: ownerID,
                run: session.query
            ).id
        }
        guard let bot = try await bots(ownerID: ownerID, id: id).first else { throw BotError.noSuchBot }
        return bot
    }

    /// The owner's bots (or the one with `id`), oldest first, with their open portfolios.
    func bots(ownerID: Int, id: Int? = nil) async throws -> [Bot] {
        let rows = try await pool.query(
            """
            SELECT u.id, u.username, u.created_at, p.id, p.league_id, p.kind
            FROM users u LEFT JOIN portfolios p ON p.user_id = u.id AND p.kind <> \(PortfolioKind.practice) AND p.archived_at IS NULL
            WHERE u.bot_owner_id = \(ownerID) AND (\(id)::int8 IS NULL OR u.id = \(id))
            ORDER BY u.id, p.league_id NULLS FIRST, p.id
            """
        ).decode((Int, String, Date, Int?, Int?, PortfolioKind?).self)
        // One row per bot and open portfolio (none: one row without), in the bots' order.
        let portfolios = Dictionary(grouping: rows, by: \.0).mapValues { rows in
            rows.compactMap { row -> Bot.Portfolio? in
                guard let id = row.3, let kind = row.5 else { return nil }
                return Bot.Portfolio(id: id, leagueId: row.4, kind: kind)
            }
        }
        var seen = Set<Int>()
        return rows.filter { seen.insert($0.0).inserted }.map { row in
            Bot(id: row.0, username: row.1, ownerId: ownerID, createdAt: row.2, portfolios: portfolios[row.0] ?? [])
        }
    }

    /// Deletes the owner's bot: its account erased as any account is
    /// (`PersonalDataStore.erase`: its keys revoked, its league seats given up, then the
    /// account with its portfolios and their history). Returns the keys revoked; nil when
    /// the owner has no such bot.
    func delete(id: Int, ownerID: Int) async throws -> [String]? {
        guard case .erased(let keys) = try await PersonalDataStore(pool: pool).erase(userID: id, .bot(ownerID: ownerID), audit: nil) else {
            return nil
        }
        return keys
    }
}
