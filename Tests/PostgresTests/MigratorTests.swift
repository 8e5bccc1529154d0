import Foundation
import Logging
import Postgres
import Testing
import TestSupport

@Suite("Migrations")
struct MigratorTests {
    let logger = Logger(label: "migrator-test")

    static let migrations = [
        PostgresMigrator.Migration(
            version: 1, name: "0001_accounts",
            sql: "CREATE TABLE accounts (id bigserial PRIMARY KEY, name text NOT NULL);"
        ),
        PostgresMigrator.Migration(
            version: 2, name: "0002_seed",
            sql: "INSERT INTO accounts (name) VALUES ('first');\nALTER TABLE accounts ADD COLUMN note text;"
        ),
    ]

    @Test("applying twice is a no-op")
    func idempotent() async throws {
        try await TemporaryDatabase.withPool { pool in
            let migrator = PostgresMigrator(pool: pool, migrations: Self.migrations, logger: logger)
            #expect(try await migrator.migrate() == ["0001_accounts", "0002_seed"])
            #expect(try await migrator.migrate() == [])
            #expect(try await pool.query("SELECT count(*) FROM accounts").decodeColumn(Int.self) == [1])
            let versions = try await pool.query("SELECT version FROM schema_migrations ORDER BY version")
            #expect(try versions.decodeColumn(Int.self) == [1, 2])
        }
    }

    @Test("two migrators running at once apply each migration exactly once")
    func concurrentMigrators() async throws {
        try await TemporaryDatabase.with { database in
            let pools = (0..<4).map { _ in PostgresConnectionPool(configuration: database.configuration) }
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for pool in pools {
                    group.addTask {
                        try await PostgresMigrator(pool: pool, migrations: Self.migrations, logger: logger).migrate()
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(applied.sorted() == ["0001_accounts", "0002_seed"])
            let rows = try await pools[0].query("SELECT count(*) FROM accounts").decodeColumn(Int.self)
            #expect(rows == [1])
            for pool in pools { await pool.close() }
        }
    }

    @Test("a failing migration leaves nothing behind and stops the ones after it")
    func failingMigrationRollsBack() async throws {
        try await TemporaryDatabase.withPool { pool in
            let broken = Self.migrations + [
                PostgresMigrator.Migration(
                    version: 3, name: "0003_broken",
                    sql: "CREATE TABLE half (id int);\nINSERT INTO nowhere VALUES (1);"
                ),
                PostgresMigrator.Migration(version: 4, name: "0004_after", sql: "CREATE TABLE after (id int);"),
            ]
            let migrator = PostgresMigrator(pool: pool, migrations: broken, logger: logger)
            let error = try await #require(throws: MigrationError.self) { try await migrator.migrate() }
            #expect(error.description.contains("0003_broken"))
            let tables = try await pool.query(
                "SELECT count(*) FROM pg_tables WHERE tablename IN ('half', 'after')"
            ).decodeColumn(Int.self)
            #expect(tables == [0])
            let versions = try await pool.query("SELECT max(version) FROM schema_migrations").decodeColumn(Int.self)
            #expect(versions == [2])
        }
    }

    @Test("migration files are read in version order and misnamed files are refused")
    func loadsFromDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 2;".write(to: directory.appendingPathComponent("0010_second.sql"), atomically: true, encoding: .utf8)
        try "SELECT 1;".write(to: directory.appendingPathComponent("0002_first.sql"), atomically: true, encoding: .utf8)
        try "notes".write(to: directory.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
        let loaded = try PostgresMigrator.loadMigrations(from: directory)
        #expect(loaded.map(\.name) == ["0002_first", "0010_second"])
        #expect(loaded.map(\.version) == [2, 10])

        try "SELECT 3;".write(to: directory.appendingPathComponent("third.sql"), atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.self) { try PostgresMigrator.loadMigrations(from: directory) }
    }
}
