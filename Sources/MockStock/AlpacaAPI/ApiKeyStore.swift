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
        /// A league the portfolio plays in forbids bots, and so this key (`api_keys_forbidden`).
        let forbidden: Bool
    }

    static func hash(secret: String) -> Data {
        Data(SHA256.hash(data: Data(secret.utf8)))
    }

    enum Creation: Sendable {
        case created(CreatedApiKey)
        /// The holder is neither the caller nor one of the caller's bots.
        case noSuchHolder
        case noSuchPortfolio
    }

    /// A new key for one of the holder's portfolios (nil: the personal one); the holder is
    /// the owner or one of the owner's bots. `tooManyKeys` past the holder's limit,
    /// counted under a lock of the holder's row so two concurrent creations cannot both
    /// pass it; `botsForbidden` when a league the portfolio plays in forbids bots.
    func create(ownerID: Int, holderID: Int, portfolioID: Int?, name: String) async throws -> Creation {
        let keyID = ApiKeyFormat.newKeyID()
        let secret = ApiKeyFormat.newSecret()
        let limit = ApiKeyFormat.maxKeysPerUser
        return try await pool.withTransaction { session in
            // One creation at a time per holder: the count below then holds until commit.
            guard try await session.query(
                "SELECT 1 FROM users WHERE id = \(holderID) AND (id = \(ownerID) OR bot_owner_id = \(ownerID)) FOR NO KEY UPDATE"
            ).count == 1 else { return .noSuchHolder }
            let rows = try await session.query(
                """
                WITH target AS (
                    SELECT p.id, api_keys_forbidden(p.id) AS forbidden FROM portfolios p
                    WHERE p.user_id = \(holderID) AND p.archived_at IS NULL
                      AND portfolio_named(p.kind, p.id, \(portfolioID)::int8)
                ), room AS (
                    SELECT count(*) < \(limit) AS ok FROM api_keys WHERE user_id = \(holderID)
                ), created AS (
                    INSERT INTO api_keys (key_id, secret_hash, user_id, portfolio_id, name)
                    SELECT \(keyID), \(Self.hash(secret: secret)), \(holderID), target.id, \(name)
                    FROM target, room WHERE room.ok AND NOT target.forbidden
                    RETURNING portfolio_id, created_at
                )
                SELECT (SELECT ok FROM room), (SELECT forbidden FROM target), created.portfolio_id, created.created_at
                FROM (SELECT 1) one LEFT JOIN created ON true
                """
            ).decode((Bool, Bool?, Int?, Date?).self)
            guard let (room, forbidden, portfolio, createdAt) = rows.first, let forbidden else { return .noSuchPortfolio }
            guard !forbidden else { throw ApiKeyError.botsForbidden }
            guard room, let portfolio, let createdAt else { throw ApiKeyError.tooManyKeys(limit: limit) }
            return .created(CreatedApiKey(
                keyId: keyID, secret: secret, portfolioId: portfolio, botId: holderID == ownerID ? nil : holderID, name: name, createdAt: createdAt
            ))
        }
    }

    /// The owner's keys and their bots' keys, oldest first.
    func keys(ownerID: Int) async throws -> [ApiKey] {
        try await pool.query(
            """
            SELECT k.key_id, k.portfolio_id, u.bot_owner_id IS NOT NULL, k.user_id, k.name, k.created_at, k.last_used_at
            FROM api_keys k JOIN users u ON u.id = k.user_id
            WHERE k.user_id = \(ownerID) OR u.bot_owner_id = \(ownerID) ORDER BY k.created_at, k.key_id
            """
        ).decode((String, Int, Bool, Int, String, Date, Date?).self).map {
            ApiKey(keyId: $0.0, portfolioId: $0.1, botId: $0.2 ? $0.3 : nil, name: $0.4, createdAt: $0.5, lastUsedAt: $0.6)
        }
    }

    /// Revokes one of the owner's keys or their bots'; false when there is no such key.
    func delete(ownerID: Int, keyID: String) async throws -> Bool {
        try await pool.query(
            """
            DELETE FROM api_keys k USING users u
            WHERE k.key_id = \(keyID) AND u.id = k.user_id AND (u.id = \(ownerID) OR u.bot_owner_id = \(ownerID))
            RETURNING 1
            """
        ).count == 1
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

    /// Who a key acts as, if it exists and its portfolio is still open. Read for most of a
    /// bot's requests (a key is remembered 2 s, a bot polls about as often), so whether its
    /// league forbids keys is the statement's own probe of the set, planned with it, not a
    /// call of `api_keys_forbidden`, whose body PostgreSQL plans anew each time (~0.8 ms).
    func holder(keyID: String) async throws -> Holder? {
        try await pool.query(
            """
            SELECT k.user_id, u.role, k.portfolio_id, k.secret_hash, \(TradeStatement.keyForbidden)
            FROM api_keys k JOIN users u ON u.id = k.user_id JOIN portfolios p ON p.id = k.portfolio_id
            WHERE k.key_id = \(keyID) AND p.archived_at IS NULL
            """
        ).decode((Int, Role, Int, Data, Bool).self).first.map {
            Holder(userID: $0.0, role: $0.1, portfolioID: $0.2, secretHash: $0.3, forbidden: $0.4)
        }
    }
}
