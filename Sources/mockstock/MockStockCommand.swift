import ArgumentParser
import Foundation
import Logging
import Metrics
import MockStock
import Postgres
import Prometheus

@main
struct MockStockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mockstock",
        abstract: "The MockStock game server.",
        discussion: "Configuration comes from the environment; see docs/configuration.md.",
        subcommands: [Serve.self, Migrate.self, Seed.self, Admin.self],
        defaultSubcommand: Serve.self
    )
}

/// Reads the environment and sets up logging, shared by every command.
func loadConfiguration() throws -> (AppConfiguration, Logger) {
    let configuration: AppConfiguration
    do {
        configuration = try AppConfiguration(environment: ProcessInfo.processInfo.environment)
    } catch let error as ConfigurationError {
        throw ValidationError(error.description)
    }
    let level = configuration.logLevel
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    return (configuration, Logger(label: "mockstock"))
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending migrations, then serve HTTP until SIGTERM or SIGINT."
    )

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        let metrics = AppMetrics()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metrics.registry))
        let app = try await buildApplication(configuration: configuration, logger: logger, metrics: metrics)
        try await app.runService()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Apply pending database migrations and exit.")

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        try await withDatabase(configuration, logger) { _ in }
    }
}

/// Migrates, runs `body` with a small pool and closes it; errors the input caused
/// become usage errors with their plain message.
func withDatabase(
    _ configuration: AppConfiguration, _ logger: Logger, _ body: (PostgresConnectionPool) async throws -> Void
) async throws {
    let pool = PostgresConnectionPool(configuration: configuration.postgres(maxConnections: 2), logger: logger)
    do {
        try await migrate(pool: pool, configuration: configuration, logger: logger)
        try await body(pool)
    } catch let error as InvalidInput {
        await pool.close()
        throw ValidationError(error.detail)
    } catch {
        await pool.close()
        throw error
    }
    await pool.close()
}

struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load instruments and daily prices from CSV files (.gz accepted). Loading the same files again changes nothing."
    )

    @Option(name: .customLong("instruments"), help: "CSV with symbol,name[,sector,description,currency] (or the S&P constituents list). Repeatable.")
    var instrumentFiles: [String] = []

    @Option(name: .customLong("prices"), help: "CSV with symbol,date,open,high,low,close,volume[,dividend,split]. Repeatable.")
    var priceFiles: [String] = []

    @Option(name: .customLong("fx"), help: "The ECB's daily exchange rates: Date,USD,JPY,... (units per euro, N/A where none).")
    var fxFiles: [String] = []

    @Flag(help: "Do nothing when the database already has instruments (for a first start); rates only when it has none.")
    var ifEmpty = false

    func run() async throws {
        let (configuration, logger) = try loadConfiguration()
        try await withDatabase(configuration, logger) { pool in
            let seeder = MarketSeeder(pool: pool)
            var fxWanted = !ifEmpty
            if !fxWanted { fxWanted = try await seeder.hasNoFX() }
            for file in fxFiles where fxWanted {
                let count = try await seeder.seedFX(try FileChunks(path: file))
                print("\(file): \(count) exchange rates")
            }
            if ifEmpty, try await !seeder.isEmpty() {
                print("The market already has instruments; nothing more seeded.")
                return
            }
            for file in instrumentFiles {
                let count = try await seeder.seedInstruments(csv: String(contentsOfFile: file, encoding: .utf8))
                print("\(file): \(count) instruments")
            }
            for file in priceFiles {
                let started = ContinuousClock.now
                let count = try await seeder.seedPrices(try FileChunks(path: file))
                print("\(file): \(count) daily bars in \(ContinuousClock.now - started)")
            }
        }
    }
}

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage admin accounts.",
        subcommands: [Create.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an admin, or make an existing user an admin. Reads the password from standard input."
        )

        @Option(help: "The admin's username (3–32 of A–Z a–z 0–9 _ . -).")
        var username: String

        func run() async throws {
            let (configuration, logger) = try loadConfiguration()
            if isatty(STDIN_FILENO) == 1 {
                FileHandle.standardError.write(Data("Password for \(username): ".utf8))
            }
            guard let password = readLine(strippingNewline: true), !password.isEmpty else {
                throw ValidationError("Give the password on standard input, e.g. `printf %s \"$PASSWORD\" | mockstock admin create --username \(username)`")
            }
            do {
                try Credentials.validateUsername(username)
                try Credentials.validatePassword(password)
            } catch let error as InvalidInput {
                throw ValidationError(error.detail)
            }
            try await withDatabase(configuration, logger) { pool in
                let accounts = await makeAccountService(configuration: configuration, pool: pool, logger: logger)
                try await accounts.ensureAdmin(username: username, password: password, logger: logger)
            }
            print("\(username) is an admin.")
        }
    }
}
