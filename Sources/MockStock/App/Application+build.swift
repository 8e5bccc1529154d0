import Foundation
import Hummingbird
import Logging
import Postgres

/// Builds the server: database pool, migrations before start-up, router and middleware.
public func buildApplication(
    configuration: AppConfiguration,
    logger: Logger,
    metrics: AppMetrics = AppMetrics()
) async throws -> some ApplicationProtocol {
    var poolLogger = logger
    poolLogger[metadataKey: "component"] = "postgres"
    let pool = PostgresConnectionPool(configuration: configuration.postgres(), logger: poolLogger)
    let router = buildRouter(configuration: configuration, pool: pool, metrics: metrics)
    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "MockStock"),
        services: [pool],
        logger: logger
    )
    if configuration.migrateOnStart {
        app.beforeServerStarts {
            try await migrate(pool: pool, configuration: configuration, logger: logger)
        }
    }
    return app
}

/// Applies pending migrations, waiting up to `databaseStartupTimeout` for the database to
/// accept connections (it may still be starting, e.g. under docker compose).
public func migrate(pool: PostgresConnectionPool, configuration: AppConfiguration, logger: Logger) async throws {
    let migrations = try PostgresMigrator.loadMigrations(from: configuration.migrationsDirectory)
    let migrator = PostgresMigrator(pool: pool, migrations: migrations, logger: logger)
    let deadline = ContinuousClock.now + configuration.databaseStartupTimeout
    while true {
        do {
            let applied = try await migrator.migrate()
            logger.info("database schema is current", metadata: ["applied": "\(applied.count)", "known": "\(migrations.count)"])
            return
        } catch let error as PostgresError where error.isConnectionFailure && ContinuousClock.now < deadline {
            logger.notice("waiting for the database", metadata: ["error": "\(error)"])
            try await Task.sleep(for: .seconds(1))
        }
    }
}

/// The routes and middleware, in the order requests pass through them.
func buildRouter(
    configuration: AppConfiguration,
    pool: PostgresConnectionPool,
    metrics: AppMetrics
) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: BodyLimitMiddleware(maxBytes: AppRequestContext.maxBodySize))
    OperationsController(pool: pool, metrics: metrics, openAPIFile: configuration.openAPIFile).addRoutes(to: router)
    return router
}
