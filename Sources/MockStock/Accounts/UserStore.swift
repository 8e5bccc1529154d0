import Foundation
import Postgres

/// Users, and the personal portfolio each one gets.
struct UserStore: Sendable {
    let pool: PostgresConnectionPool
    /// Token versions, which may be a little stale: a revoked token lives on another
    /// process for the version cache's lifetime, plus the replica's lag when it is read.
    var reads: StaleReads? = nil

    /// Creates a user, the personal portfolio and its starting cash movement in one
    /// statement, so either all exist or none. A taken username (any case) throws `AccountError.usernameTaken`.
    func create(username: String, email: String?, passwordHash: String, role: Role, startingCash: Decimal) async throws -> User {
        try await Self.create(
            username: username, email: email, passwordHash: passwordHash, role: role, startingCash: startingCash, botOwnerID: nil,
            run: pool.query
        )
    }

    /// The same through `run` (a pool or a transaction's session): a player, a bot of
    /// `botOwnerID` (no password, no email), or a student of a class roster, managed by
    /// the host `managedBy` under the `displayName` they typed (no email).
    static func create(
        username: String, email: String?, passwordHash: String, role: Role, startingCash: Decimal, botOwnerID: Int?,
        displayName: String? = nil, managedBy: Int? = nil, run: (PostgresQuery) async throws -> PostgresRows
    ) async throws -> User {
        do {
            let rows = try await run(
                """
                WITH new_user AS (
                    INSERT INTO users (username, email, password_hash, role, bot_owner_id, display_name, managed_by)
                    VALUES (\(username), \(email), \(passwordHash), \(role), \(botOwnerID), \(displayName), \(managedBy))
                    RETURNING id, username, role, created_at
                ), personal AS (
                    INSERT INTO portfolios (user_id, name, cash)
                    SELECT id, 'Personal', \(startingCash) FROM new_user
                    RETURNING id
                ), funding AS (
                    INSERT INTO cash_movements (portfolio_id, kind, amount, note)
                    SELECT id, \(CashMovementKind.startingCash), \(startingCash), 'Starting cash' FROM personal
                )
                SELECT id, username, role, created_at FROM new_user
                """
            )
            return try Self.user(from: rows[0])
        } catch let error as PostgresError where error.code == .uniqueViolation {
            throw AccountError.usernameTaken
        }
    }

    /// Whether any admin exists.
    func hasAdmin() async throws -> Bool {
        try await pool.query("SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin')").decodeColumn(Bool.self) == [true]
    }

    func find(username: String) async throws -> UserRecord? {
        try await record(
            """
            SELECT id, username, role, created_at, password_hash, token_version
            FROM users WHERE lower(username) = lower(\(username))
            """
        )
    }

    /// What `GET /api/me` shows beyond the user: a managed student's display name and host.
    func profile(id: Int) async throws -> (user: User, displayName: String?, managedBy: Int?)? {
        guard let row = try await pool.query(
            "SELECT id, username, role, created_at, display_name, managed_by FROM users WHERE id = \(id)"
        ).first else { return nil }
        let (id, username, role, createdAt, displayName, managedBy) = try row.decode((Int, String, Role, Date, String?, Int?).self)
        return (User(id: id, username: username, role: role, createdAt: createdAt), displayName, managedBy)
    }

    func find(id: Int) async throws -> UserRecord? {
        try await record(
            "SELECT id, username, role, created_at, password_hash, token_version FROM users WHERE id = \(id)"
        )
    }

    /// The token version and role, read on every authenticated request (through a cache).
    func tokenState(id: Int) async throws -> (version: Int, role: Role)? {
        try await tokenState(id: id, from: reads ?? StaleReads(pool: pool))
    }

    /// The token version on the primary: for a token newer than a replica knows of (a
    /// login or logout on another server a moment ago), or a user it does not have yet.
    func currentTokenState(id: Int) async throws -> (version: Int, role: Role)? {
        try await tokenState(id: id, from: StaleReads(pool: pool))
    }

    private func tokenState(id: Int, from reads: StaleReads) async throws -> (version: Int, role: Role)? {
        let rows = try await reads.query("SELECT token_version, role FROM users WHERE id = \(id)")
        guard let row = rows.first else { return nil }
        let (version, role) = try row.decode((Int, Role).self)
        return (version, role)
    }

    /// Revokes every token issued so far; returns the new version.
    func bumpTokenVersion(id: Int) async throws -> Int {
        try await pool.query(
            "UPDATE users SET token_version = token_version + 1 WHERE id = \(id) RETURNING token_version"
        ).decodeColumn(Int.self).first ?? 0
    }

    /// Sets a new password hash and revokes earlier tokens; returns the new version.
    func changePassword(id: Int, passwordHash: String) async throws -> Int {
        try await pool.query(
            """
            UPDATE users SET password_hash = \(passwordHash), token_version = token_version + 1
            WHERE id = \(id) RETURNING token_version
            """
        ).decodeColumn(Int.self).first ?? 0
    }

    /// Makes an existing user an admin with this password hash; false when no such user,
    /// or when the name is a bot's (a bot stays a player, as its row's check says).
    func promoteToAdmin(username: String, passwordHash: String?) async throws -> Bool {
        try await pool.execute(
            """
            UPDATE users
            SET role = 'admin', password_hash = coalesce(\(passwordHash), password_hash),
                token_version = token_version + CASE WHEN \(passwordHash)::text IS NULL THEN 0 ELSE 1 END
            WHERE lower(username) = lower(\(username)) AND bot_owner_id IS NULL
            """
        ) == 1
    }

    private func record(_ query: PostgresQuery) async throws -> UserRecord? {
        guard let row = try await pool.query(query).first else { return nil }
        let (id, username, role, createdAt, hash, version) = try row.decode((Int, String, Role, Date, String, Int).self)
        return UserRecord(
            user: User(id: id, username: username, role: role, createdAt: createdAt),
            passwordHash: hash,
            tokenVersion: version
        )
    }

    private static func user(from row: PostgresRow) throws -> User {
        let (id, username, role, createdAt) = try row.decode((Int, String, Role, Date).self)
        return User(id: id, username: username, role: role, createdAt: createdAt)
    }
}
