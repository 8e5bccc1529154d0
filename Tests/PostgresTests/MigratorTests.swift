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

    static let definitions = [
        // A function may name a view defined after it: bodies are checked when called.
        PostgresMigrator.Definition(
            path: "functions/count_doubled.sql",
            sql: "CREATE OR REPLACE FUNCTION count_doubled() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM doubled $$;"
        ),
        PostgresMigrator.Definition(
            path: "functions/double_it.sql",
            sql: "CREATE OR REPLACE FUNCTION double_it(n bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT n * 2 $$;"
        ),
        PostgresMigrator.Definition(
            path: "views/doubled.sql", sql: "CREATE OR REPLACE VIEW doubled AS SELECT double_it(id) AS twice FROM accounts;"
        ),
    ]

    @Test("definitions are applied in order, again only when their file changes, and all again after a migration")
    func definitionsFollowTheirFiles() async throws {
        try await TemporaryDatabase.withPool { pool in
            let paths = Self.definitions.map(\.path)
            let first = PostgresMigrator(pool: pool, migrations: Self.migrations, definitions: Self.definitions, logger: logger)
            #expect(try await first.migrate() == ["0001_accounts", "0002_seed"] + paths)
            #expect(try await pool.query("SELECT twice FROM doubled").decodeColumn(Int.self) == [2])
            #expect(try await pool.query("SELECT count_doubled()").decodeColumn(Int.self) == [1])
            #expect(try await first.migrate() == [])

            var changed = Self.definitions
            changed[1] = PostgresMigrator.Definition(
                path: "functions/double_it.sql",
                sql: "CREATE OR REPLACE FUNCTION double_it(n bigint) RETURNS bigint LANGUAGE sql AS $$ SELECT n * 20 $$;"
            )
            let edited = PostgresMigrator(pool: pool, migrations: Self.migrations, definitions: changed, logger: logger)
            #expect(try await edited.migrate() == ["functions/double_it.sql"])
            #expect(try await pool.query("SELECT twice FROM doubled").decodeColumn(Int.self) == [20])

            // A migration drops the view; everything is defined again after it.
            let dropping = Self.migrations + [
                PostgresMigrator.Migration(version: 3, name: "0003_drop_view", sql: "DROP VIEW doubled;")
            ]
            let later = PostgresMigrator(pool: pool, migrations: dropping, definitions: changed, logger: logger)
            #expect(try await later.migrate() == ["0003_drop_view"] + paths)
            #expect(try await pool.query("SELECT twice FROM doubled").decodeColumn(Int.self) == [20])

            // A file that is gone is forgotten (its object is a migration's to drop).
            let fewer = PostgresMigrator(pool: pool, migrations: dropping, definitions: Array(changed.prefix(2)), logger: logger)
            #expect(try await fewer.migrate() == [])
            let recorded = try await pool.query("SELECT path FROM schema_repeatables ORDER BY path").decodeColumn(String.self)
            #expect(recorded == Array(paths.prefix(2)))
        }
    }

    @Test("a failing definition leaves every definition of that run unapplied")
    func failingDefinitionRollsBack() async throws {
        try await TemporaryDatabase.withPool { pool in
            let broken = Self.definitions + [PostgresMigrator.Definition(path: "views/zz_broken.sql", sql: "CREATE VIEW zz AS SELECT * FROM nowhere;")]
            let migrator = PostgresMigrator(pool: pool, migrations: Self.migrations, definitions: broken, logger: logger)
            let error = try await #require(throws: MigrationError.self) { try await migrator.migrate() }
            #expect(error.description.contains("views/zz_broken.sql"))
            let functions = try await pool.query("SELECT count(*) FROM pg_proc WHERE proname = 'double_it'").decodeColumn(Int.self)
            #expect(functions == [0])
            #expect(try await pool.query("SELECT count(*) FROM schema_repeatables").decodeColumn(Int.self) == [0])
        }
    }

    @Test("a baseline is recorded, not run, for a database made by the files it replaced; a fresh one runs it")
    func baselineReplacesEarlierFiles() async throws {
        let baseline = [
            PostgresMigrator.Migration(
                version: 2, name: "0002_baseline",
                sql: "CREATE TABLE accounts (id bigserial PRIMARY KEY, name text NOT NULL, note text);"
            ),
            PostgresMigrator.Migration(version: 3, name: "0003_after", sql: "ALTER TABLE accounts ADD COLUMN later int;"),
        ]
        try await TemporaryDatabase.withPool { pool in
            try await PostgresMigrator(pool: pool, migrations: Self.migrations, logger: logger).migrate()
            let migrator = PostgresMigrator(pool: pool, migrations: baseline, logger: logger)
            #expect(try await migrator.migrate() == ["0002_baseline", "0003_after"])
            #expect(try await migrator.migrate() == [])
            let names = try await pool.query("SELECT name FROM schema_migrations ORDER BY version").decodeColumn(String.self)
            #expect(names == ["0002_baseline", "0003_after"])
            // Nothing was lost: the row the replaced files wrote is still there.
            #expect(try await pool.query("SELECT name FROM accounts").decodeColumn(String.self) == ["first"])
        }
        try await TemporaryDatabase.withPool { pool in
            let applied = try await PostgresMigrator(pool: pool, migrations: baseline, logger: logger).migrate()
            #expect(applied == ["0002_baseline", "0003_after"])
            let rows = try await pool.query("SELECT count(*) FROM accounts").decodeColumn(Int.self)
            #expect(rows == [0])
        }
        try await TemporaryDatabase.withPool { pool in
            try await PostgresMigrator(pool: pool, migrations: [Self.migrations[0]], logger: logger).migrate()
            let error = try await #require(throws: MigrationError.self) {
                try await PostgresMigrator(pool: pool, migrations: baseline, logger: logger).migrate()
            }
            #expect(error.description.contains("at migration 1"))
            let versions = try await pool.query("SELECT version FROM schema_migrations").decodeColumn(Int.self)
            #expect(versions == [1])
        }
    }

    @Test("definitions are read from functions/, views/ and triggers/ in that order")
    func loadsDefinitions() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: directory) }
        for path in ["triggers/a.sql", "views/b.sql", "views/a.sql", "functions/z.sql", "functions/notes.md"] {
            let url = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "SELECT 1;".write(to: url, atomically: true, encoding: .utf8)
        }
        let loaded = try PostgresMigrator.loadDefinitions(from: directory)
        #expect(loaded.map(\.path) == ["functions/z.sql", "views/a.sql", "views/b.sql", "triggers/a.sql"])
    }
}
