import Crypto
import Foundation
import Postgres

/// API keys in `api_keys` (`sql/migrations/0028_baseline.sql`).
struct ApiKeyStore: Sendable {
    let pool: PostgresConnectionPool

    /// What a key acts as.
    struct Holder: Sendable, Equatable {
        let userID: Int
        let role: Role
        let portfolioID: Int
        let secretHash: Data
    }

    static func hash(secret: String) -> Data {
        Data(SHA256.hash(data: Data(secret.utf8)))
    }

    /// A new key for one of the user's portfolios (nil: the personal one). Nil when the
    /// portfolio is not theirs (or is archived); `tooManyKeys` past the limit, counted in
    /// the same statement so two concurrent creations cannot both pass it.
    func create(userID: Int, portfolioID: Int?, name: String) async throws -> CreatedApiKey? {
        let keyID = ApiKeyFormat.newKeyID()
        let secret = ApiKeyFormat.newSecret()
        let limit = ApiKeyFormat.maxKeysPerUser
        let rows = try await pool.withTransaction { session in
            // One creation at a time per user: the count below then holds until commit.
            try await session.execute("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE")
            return try await session.query(
                """
                WITH target AS (
                    SELECT p.id FROM portfolios p
                    WHERE p.user_id = \(userID) AND p.archived_at IS NULL
                      AND portfolio_named(p.kind, p.id, \(portfolioID)::int8)
                ), room AS (
                    SELECT count(*) < \(limit) AS ok FROM api_keys WHERE user_id = \(userID)
                ), created AS (
                    INSERT INTO api_keys (key_id, secret_hash, user_id, portfolio_id, name)
                    SELECT \(keyID), \(Self.hash(secret: secret)), \(userID), target.id, \(name)
                    FROM target, room WHERE room.ok
                    RETURNING portfolio_id, created_at
                )
                SELECT (SELECT ok FROM room), (SELECT count(*) FROM target) > 0, created.portfolio_id, created.created_at
                FROM (SELECT 1) one LEFT JOIN created ON true
                """
            ).decode((Bool, Bool, Int?, Date?).self)
        }
        guard let (room, found, portfolio, createdAt) = rows.first, found else { return nil }
        guard room, let portfolio, let createdAt else { throw ApiKeyError.tooManyKeys(limit: limit) }
        return CreatedApiKey(keyId: keyID, secret: secret, portfolioId: portfolio, name: name, createdAt: createdAt)
    }

    func keys(userID: Int) async throws -> [ApiKey] {
        try await pool.query(
            """
            SELECT key_id, portfolio_id, name, created_at, last_used_at FROM api_keys
            WHERE user_id = \(userID) ORDER BY created_at, key_id
            """
        ).decode((String, Int, String, Date, Date?).self).map {
            ApiKey(keyId: $0.0, portfolioId: $0.1, name: $0.2, createdAt: $0.3, lastUsedAt: $0.4)
        }
    }

    /// Revokes one of the user's keys; false when they have no such key.
    func delete(userID: Int, keyID: String) async throws -> Bool {
        try await pool.query("DELETE FROM api_keys WHERE user_id = \(userID) AND key_id = \(keyID) RETURNING 1").count == 1
    }

    /// Records a use of the key (at most one a minute counts).
    func touch(keyID: String) async throws {
        try await pool.execute(
            """
            UPDATE api_keys SET last_used_at = now()
            WHERE key_id = \(keyID) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            """
        )
    }

    /// Who a key acts as, if it exists and its portfolio is still open.
    func holder(keyID: String) async throws -> Holder? {
        try await pool.query(
            """
            SELECT k.user_id, u.role, k.portfolio_id, k.secret_hash
            FROM api_keys k JOIN users u ON u.id = k.user_id JOIN portfolios p ON p.id = k.portfolio_id
            WHERE k.key_id = \(keyID) AND p.archived_at IS NULL
            """
        ).decode((Int, Role, Int, Data).self).first.map { Holder(userID: $0.0, role: $0.1, portfolioID: $0.2, secretHash: $0.3) }
    }
}
