import Foundation
import Logging

/// Brings a database's schema up to date from one `sql/` directory:
///
/// - `migrations/NNNN_name.sql`: forward-only changes to tables, constraints and data,
///   applied once each, in version order, each in its own transaction, recorded in
///   `schema_migrations`. A file named `NNNN_baseline.sql` stands for every migration up
///   to NNNN: a database that recorded version NNNN from the files it replaced has it.
/// - `functions/`, `views/`, `triggers/`: one `CREATE OR REPLACE` definition per file,
///   applied in that order and by file name within each folder, recorded by checksum in
///   `schema_repeatables`. A file is applied again when its content changes, and every one
///   is applied again after a migration ran (a migration may have dropped what it defined).
///
/// An advisory lock makes concurrent migrators (two servers starting at once) take turns.
/// No file may contain `BEGIN`/`COMMIT` or statements that cannot run in a transaction
/// (such as `CREATE INDEX CONCURRENTLY`).
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

        var checksum: String { PostgresMigrator.checksum(sql) }
        var isBaseline: Bool { name.hasSuffix("_baseline") }
    }

    /// One definition of a function, view or trigger function, kept in a file of its own.
    public struct Definition: Sendable, Equatable {
        /// Its path inside the `sql/` directory, such as `functions/fx_rate.sql`.
        public let path: String
        public let sql: String

        public init(path: String, sql: String) {
            self.path = path
            self.sql = sql
        }

        var checksum: String { PostgresMigrator.checksum(sql) }
    }

    /// The folders of definitions, in the order they are applied: views may use functions,
    /// and a trigger's file creates the trigger as well as its function.
    public static let definitionFolders = ["functions", "views", "triggers"]

    /// Key of the advisory lock held while migrating ("mockstock" in ASCII, folded).
    static let lockKey: Int64 = 0x6d6f_636b_7374_6f63
    let pool: PostgresConnectionPool
    let migrations: [Migration]
    let definitions: [Definition]
    let logger: Logger

    public init(pool: PostgresConnectionPool, migrations: [Migration], definitions: [Definition] = [], logger: Logger) {
        self.pool = pool
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.definitions = definitions
        self.logger = logger
    }

    /// A migrator for the `migrations/` and definition folders of an `sql/` directory.
    public init(pool: PostgresConnectionPool, directory: URL, logger: Logger) throws {
        self.init(
            pool: pool,
            migrations: try Self.loadMigrations(from: directory.appendingPathComponent("migrations", isDirectory: true)),
            definitions: try Self.loadDefinitions(from: directory),
            logger: logger
        )
    }

    /// Reads `NNNN_name.sql` files from a directory; other files are ignored.
    public static func loadMigrations(from directory: URL) throws -> [Migration] {
        var migrations: [Migration] = []
        for name in try sqlFiles(in: directory) {
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

    /// Reads the `.sql` files of the definition folders, in the order they are applied;
    /// a folder that does not exist holds none.
    public static func loadDefinitions(from directory: URL) throws -> [Definition] {
        var definitions: [Definition] = []
        for folder in definitionFolders {
            let url = directory.appendingPathComponent(folder, isDirectory: true)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            for name in try sqlFiles(in: url) {
                let sql = try String(contentsOf: url.appendingPathComponent(name), encoding: .utf8)
                definitions.append(Definition(path: "\(folder)/\(name)", sql: sql))
            }
        }
        return definitions
    }

    private static func sqlFiles(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }.sorted()
    }

    /// FNV-1a of the text: a change of any byte shows.
    static func checksum(_ sql: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// Applies every migration not applied yet, then every definition that is new, changed,
    /// or follows a migration; returns the names of the migrations and the paths of the
    /// definitions it applied.
    @discardableResult
    public func migrate() async throws -> [String] {
        try await pool.withConnection { session in
            try await session.query("SELECT pg_advisory_lock(\(Self.lockKey))")
            do {
                let applied = try await applyPending(session)
                let defined = try await applyDefinitions(session, all: !applied.isEmpty)
                try await session.query("SELECT pg_advisory_unlock(\(Self.lockKey))")
                return applied + defined
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
        var applied = try await appliedMigrations(session)
        var names: [String] = []
        if let baseline = migrations.first(where: \.isBaseline), try await adoptBaseline(baseline, applied, session) {
            applied = try await appliedMigrations(session)
            names.append(baseline.name)
        }
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
            try await inTransaction(session, failing: "migration \(migration.name)") {
                try await session.runScript(migration.sql)
                try await session.execute(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                    """
                )
            }
            logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
            names.append(migration.name)
        }
        return names
    }

    private func appliedMigrations(_ session: PostgresSession) async throws -> [Int: String] {
        let rows = try await session.query("SELECT version, checksum FROM schema_migrations")
        return Dictionary(uniqueKeysWithValues: try rows.decode((Int, String).self).map { ($0.0, $0.1) })
    }

    /// A database migrated by the files a baseline replaced has everything in it: its
    /// records of them become one record of the baseline. Returns whether it did so. A
    /// database part of the way through those files cannot be moved on from here.
    private func adoptBaseline(_ baseline: Migration, _ applied: [Int: String], _ session: PostgresSession) async throws -> Bool {
        let replaced = applied.keys.filter { $0 <= baseline.version }
        guard !replaced.isEmpty, applied[baseline.version] != baseline.checksum else { return false }
        guard applied[baseline.version] != nil else {
            throw MigrationError(
                "the database is at migration \(replaced.max() ?? 0), before \(baseline.name) "
                    + "replaced migrations 1–\(baseline.version); migrate it with a release that has those files first"
            )
        }
        try await inTransaction(session, failing: "recording \(baseline.name)") {
            try await session.execute("DELETE FROM schema_migrations WHERE version < \(baseline.version)")
            try await session.execute(
                """
                UPDATE schema_migrations SET name = \(baseline.name), checksum = \(baseline.checksum), applied_at = now()
                WHERE version = \(baseline.version)
                """
            )
        }
        logger.notice(
            "recorded the baseline in place of the migrations it replaces",
            metadata: ["migration": "\(baseline.name)", "replaced": "\(replaced.count)"]
        )
        return true
    }

    /// Applies, in one transaction, the definitions whose recorded checksum differs (or
    /// every one, after a migration) and forgets the records of files that are gone.
    /// Function bodies are checked when called, not when defined (as `pg_dump` restores
    /// them), so a function may name a view defined after it.
    private func applyDefinitions(_ session: PostgresSession, all: Bool) async throws -> [String] {
        try await session.runScript(
            """
            CREATE TABLE IF NOT EXISTS schema_repeatables (
                path       text PRIMARY KEY,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """
        )
        let rows = try await session.query("SELECT path, checksum FROM schema_repeatables")
        let recorded = Dictionary(uniqueKeysWithValues: try rows.decode((String, String).self).map { ($0.0, $0.1) })
        let due = definitions.filter { all || recorded[$0.path] != $0.checksum }
        let gone = Set(recorded.keys).subtracting(definitions.map(\.path)).sorted()
        guard !due.isEmpty || !gone.isEmpty else { return [] }
        try await inTransaction(session, failing: "definitions") {
            try await session.runScript("SET LOCAL check_function_bodies = off")
            for definition in due {
                do {
                    try await session.runScript(definition.sql)
                } catch {
                    throw MigrationError("definition \(definition.path) failed: \(error)", underlying: error)
                }
                try await session.execute(
                    """
                    INSERT INTO schema_repeatables (path, checksum) VALUES (\(definition.path), \(definition.checksum))
                    ON CONFLICT (path) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
                    """
                )
            }
            try await session.execute("DELETE FROM schema_repeatables WHERE path = ANY(\(gone))")
        }
        for definition in due {
            logger.info("applied definition", metadata: ["definition": "\(definition.path)"])
        }
        return due.map(\.path)
    }

    private func inTransaction(
        _ session: PostgresSession, failing what: String, _ body: () async throws -> Void
    ) async throws {
        do {
            try await session.runScript("BEGIN")
            try await body()
            try await session.runScript("COMMIT")
        } catch {
            _ = try? await session.runScript("ROLLBACK")
            if let error = error as? MigrationError { throw error }
            throw MigrationError("\(what) failed: \(error)", underlying: error)
        }
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
