import Foundation
import Postgres

/// Class rosters: accounts a host creates for a class and manages.
struct RosterStore: Sendable {
    let pool: PostgresConnectionPool

    /// A student about to be created.
    struct NewStudent: Sendable {
        let displayName: String
        let username: String
        let passwordHash: String
    }

    /// Creates the students' accounts, managed by the host, and seats them in the league,
    /// in one transaction with its audit event: all of them or none. Usernames already
    /// taken are returned instead (nothing is written), to be drawn again.
    func create(_ students: [NewStudent], leagueID: Int, hostID: Int, startingCash: Decimal, audit: AuditEntry) async throws -> Outcome {
        try await pool.withTransaction { session in
            let taken = try await session.query(
                "SELECT lower(username) FROM users WHERE lower(username) = ANY(\(students.map { $0.username.lowercased() }))"
            ).decodeColumn(String.self)
            guard taken.isEmpty else { return .usernamesTaken(Set(taken)) }
            var ids: [Int] = []
            for student in students {
                ids.append(try await UserStore.create(
                    username: student.username, email: nil, passwordHash: student.passwordHash, role: .player, startingCash: startingCash,
                    botOwnerID: nil, displayName: student.displayName, managedBy: hostID, run: session.query
                ).id)
            }
            try await LeagueStore.seat(ids, leagueID: leagueID, in: session)
            var audit = audit
            audit.details["students"] = .number(ids.count)
            audit.details["userIds"] = .numbers(ids)
            try await AuditStore.record(audit, in: session)
            return .created(ids)
        }
    }

    enum Outcome: Sendable {
        case created([Int])
        case usernamesTaken(Set<String>)
    }

    /// Sets a managed member's new password and revokes their tokens, with its audit
    /// event; the new token version, or nil when `userID` is not a member of the league
    /// that `hostID` manages.
    func setPassword(userID: Int, leagueID: Int, hostID: Int, passwordHash: String, audit: AuditEntry) async throws -> (version: Int, role: Role)? {
        try await pool.withTransaction { session in
            guard let row = try await session.query(
                """
                UPDATE users u SET password_hash = \(passwordHash), token_version = u.token_version + 1
                WHERE u.id = \(userID) AND u.managed_by = \(hostID)
                  AND EXISTS (SELECT 1 FROM league_members m WHERE m.league_id = \(leagueID) AND m.user_id = u.id)
                RETURNING u.token_version, u.role
                """
            ).first else { return nil }
            try await AuditStore.record(audit, in: session)
            let (version, role) = try row.decode((Int, Role).self)
            return (version, role)
        }
    }
}
