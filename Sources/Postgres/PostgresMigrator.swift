import Foundation
import Logging

/// Applies forward-only migrations: `NNNN_name.sql` files in one directory, in order,
/// each in its own transaction, recorded in `schema_migrations`. An advisory lock makes
/// concurrent migrators (two servers starting at once) take turns.
///
/// A migration file must not contain `BEGIN`/`COMMIT` or statements that cannot run in a
/// transaction (such as `CREATE INDEX CONCURRENTLY`).
public struct PostgresMigrator: Sendable {
    /// One migration file.
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let name: String
        public let sql: String

        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }

        var checksum: String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in sql.utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            return String(hash, radix: 16)
        }
    }

    /// Key of the advisory lock held while migrating ("mockstock" in ASCII, folded).
    static let lockKey: Int64 = 0x6d6f_636b_7374_6f63
    let pool: PostgresConnectionPool
    let migrations: [Migration]
    let logger: Logger

    public init(pool: PostgresConnectionPool, migrations: [Migration], logger: Logger) {
        self.pool = pool
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.logger = logger
    }

    /// Reads `NNNN_name.sql` files from a directory; other files are ignored.
    public static func loadMigrations(from directory: URL) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var migrations: [Migration] = []
        for name in names.sorted() where name.hasSuffix(".sql") {
            let stem = name.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw MigrationError("\(name) is not named NNNN_name.sql")
            }
            if migrations.contains(where: { $0.version == version }) {
                throw MigrationError("two migrations share version \(version)")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            migrations.append(Migration(version: version, name: String(stem), sql: sql))
        }
        return migrations
    }

    /// Applies every migration not applied yet; returns the names of those it applied.
    @discardableResult
    public func migrate() async throws -> [String] {
        try await pool.withConnection { session in
            try await session.query("SELECT pg_advisory_lock(\(Self.lockKey))")
            do {
                let applied = try await applyPending(session)
                try await session.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                return applied
            } catch {
                // The lock is per session: drop it even though this session failed.
                _ = try? await session.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                throw error
            }
        }
    }

    private func applyPending(_ session: PostgresSession) async throws -> [String] {
        try await session.runScript(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """
        )
        let rows = try await session.query("SELECT version, checksum FROM schema_migrations")
        let applied = Dictionary(uniqueKeysWithValues: try rows.decode((Int, String).self).map { ($0.0, $0.1) })
        var names: [String] = []
        for migration in migrations {
            if let checksum = applied[migration.version] {
                if checksum != migration.checksum {
                    logger.warning(
                        "migration file changed after it was applied; the change is not applied",
                        metadata: ["migration": "\(migration.name)"]
                    )
                }
                continue
            }
            do {
                try await session.runScript("BEGIN")
                try await session.runScript(migration.sql)
                try await session.execute(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """
                )
                try await session.runScript("COMMIT")
            } catch {
                _ = try? await session.runScript("ROLLBACK")
                throw MigrationError("migration \(migration.name) failed: \(error)", underlying: error)
            }
            logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
            names.append(migration.name)
        }
        return names
    }
}

/// A migration that could not be read or applied.
public struct MigrationError: Error, CustomStringConvertible {
    public let description: String
    public let underlying: (any Error)?

    init(_ description: String, underlying: (any Error)? = nil) {
        self.description = description
        self.underlying = underlying
    }
}
