import Foundation
import Postgres

/// What only the Alpaca-compatible API reads: the UUIDs accounts and assets are known by.
struct AlpacaStore: Sendable {
    let pool: PostgresConnectionPool

    struct AccountRecord: Sendable {
        let id: Int
        let uuid: String
        let createdAt: Date
        /// False when the portfolio's league is not running (it cannot trade now).
        let running: Bool
    }

    struct AssetRecord: Sendable {
        let uuid: String
        let symbol: String
        let name: String
        let active: Bool
    }

    /// The user's portfolio (nil: the personal one).
    func account(userID: Int, portfolioID: Int?) async throws -> AccountRecord? {
        try await pool.query(
            """
            SELECT p.id, p.uuid::text, p.created_at,
                   l.id IS NULL OR (l.starts_at <= now() AND (l.ends_at IS NULL OR l.ends_at > now()) AND l.finished_at IS NULL)
            FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            WHERE p.user_id = \(userID) AND p.archived_at IS NULL
              AND CASE WHEN \(portfolioID)::int8 IS NULL THEN p.league_id IS NULL ELSE p.id = \(portfolioID)::int8 END
            """
        ).decode((Int, String, Date, Bool).self).first.map { AccountRecord(id: $0.0, uuid: $0.1, createdAt: $0.2, running: $0.3) }
    }

    /// Instruments, by symbol; `active` nil for all.
    func assets(active: Bool?) async throws -> [AssetRecord] {
        try await pool.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE \(active)::bool IS NULL OR active = \(active)::bool ORDER BY symbol
            """
        ).decode((String, String, String, Bool).self).map { AssetRecord(uuid: $0.0, symbol: $0.1, name: $0.2, active: $0.3) }
    }

    /// The asset ids of these symbols.
    func assetIDs(_ symbols: Set<String>) async throws -> [String: String] {
        let rows = try await pool.query("SELECT symbol, uuid::text FROM instruments WHERE symbol = ANY(\(Array(symbols)))")
            .decode((String, String).self)
        return Dictionary(rows) { first, _ in first }
    }

    /// One instrument by symbol or by its UUID.
    func asset(symbolOrID: String) async throws -> AssetRecord? {
        let uuid = UUID(uuidString: symbolOrID)?.uuidString.lowercased()
        return try await pool.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE CASE WHEN \(uuid)::text IS NULL THEN symbol = \(symbolOrID.uppercased()) ELSE uuid = \(uuid)::uuid END
            """
        ).decode((String, String, String, Bool).self).first.map { AssetRecord(uuid: $0.0, symbol: $0.1, name: $0.2, active: $0.3) }
    }
}
