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
        discussion: "Configuration comes from the environment; see the README.",
        subcommands: [Serve.self, Migrate.self],
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
        let pool = PostgresConnectionPool(configuration: configuration.postgres(maxConnections: 1), logger: logger)
        do {
            try await migrate(pool: pool, configuration: configuration, logger: logger)
        } catch {
            await pool.close()
            throw error
        }
        await pool.close()
    }
}
