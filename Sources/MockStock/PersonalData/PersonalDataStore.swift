import Foundation
import Postgres

/// A person's data: all of it as one document, and its erasure.
struct PersonalDataStore: Sendable {
    let pool: PostgresConnectionPool

    /// Everything that belongs to the account, as JSON text (`account_export`); nil when
    /// there is no such account.
    func export(userID: Int) async throws -> String? {
        try await pool.query("SELECT account_export(\(userID))::text").decodeColumn(String?.self).first ?? nil
    }

    /// A deleted league's teams' accounts, with their portfolios: they hold nothing of
    /// anyone's (who placed each trade is the players' record, not the team's).
    static func deleteTeamAccounts(leagueID: Int, in session: PostgresSession) async throws {
        try await session.execute("DELETE FROM users WHERE id IN (SELECT account_id FROM teams WHERE league_id = \(leagueID))")
    }

    /// The managed students whose league's retention has run out (`managed_erasure_due`).
    func erasuresDue(at now: Date = Date()) async throws -> [(leagueID: Int, hostID: Int, userID: Int)] {
        try await pool.query("SELECT league_id, host_id, user_id FROM managed_erasure_due(\(now))").decode((Int, Int, Int).self)
            .map { (leagueID: $0.0, hostID: $0.1, userID: $0.2) }
    }

    /// Who may erase the account.
    enum Erasing: Sendable {
        /// The account's owner, whose password was checked.
        case own
        /// A league's host, for a student they manage who is a member of that league.
        case managed(hostID: Int, leagueID: Int)
        /// An admin, for any account but an admin's.
        case byAdmin
        /// A player deleting one of their bots (no audit event: not a host's or an admin's action).
        case bot(ownerID: Int)
    }

    enum Erasure: Sendable, Equatable {
        /// With the API keys deleted with it, for this process to forget at once.
        case erased(keys: [String])
        /// No such account (or, for a host, not a member they manage).
        case notFound
        /// An admin's account (for an admin), or not one the host manages.
        case refused
    }

    /// Erases the account and its bots in one transaction with its audit event: the
    /// leagues it owns are deleted as when an owner leaves (members' league portfolios
    /// archived), its seats given up, and then the user rows, which take with them every
    /// portfolio, holding, trade, order, note, cash movement, notification, API key, rank
    /// and achievement of theirs. Final standings keep their row, its name replaced by
    /// `erased`, so everyone else's place stays as it was. Tokens and keys stop on every
    /// process when the deletion is announced (`stream_revocation`, `stream_keys_revoked`).
    func erase(userID: Int, _ erasing: Erasing, audit: AuditEntry?) async throws -> Erasure {
        try await pool.withTransaction { session in
            let condition: PostgresQuery = switch erasing {
            case .own: "TRUE"
            case .managed(let hostID, let leagueID):
                "u.managed_by = \(hostID) AND EXISTS (SELECT 1 FROM league_members m WHERE m.league_id = \(leagueID) AND m.user_id = u.id)"
            case .byAdmin: "u.role <> 'admin'"
            case .bot(let ownerID): "u.bot_owner_id = \(ownerID)"
            }
            guard let allowed = try await session.query(
                "SELECT coalesce(\(condition), false) FROM users u WHERE u.id = \(userID) FOR UPDATE"
            ).decodeColumn(Bool.self).first else { return .notFound }
            guard allowed else { return .refused }
            let accounts = [userID] + (try await session.query("SELECT id FROM users WHERE bot_owner_id = \(userID)").decodeColumn(Int.self))
            for league in try await session.query("SELECT id FROM leagues WHERE owner_id = ANY(\(accounts))").decodeColumn(Int.self) {
                try await LeagueStore.delete(leagueID: league, in: session)
            }
            _ = try await LeagueStore.giveUpSeats(accounts, in: session)
            for table in ["league_standings", "league_live_standings"] {
                try await session.execute(
                    """
                    UPDATE \(unescaped: table) SET username = 'erased',
                        owner_username = CASE WHEN owner_username IS NOT NULL THEN 'erased' END
                    WHERE user_id = ANY(\(accounts))
                    """
                )
            }
            if let audit { try await AuditStore.record(audit, in: session) }
            let keys = try await session.query("DELETE FROM api_keys WHERE user_id = ANY(\(accounts)) RETURNING key_id").decodeColumn(String.self)
            try await session.execute("DELETE FROM users WHERE id = ANY(\(accounts))")
            return .erased(keys: keys)
        }
    }
}
