import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// The database as the server reaches it: the pool every store uses; a session of its own
/// on the primary for LISTEN and migrations, when `pool` reaches a transaction pooler; a
/// replica for reads that may be a little stale, behind its router.
struct Database {
    let pool: PostgresConnectionPool
    let direct: PostgresConnectionPool?
    let replicaRouter: PostgresReplicaRouter?
    /// Reads that may be a little stale: the replica's while it keeps up, else the pool's.
    let reads: StaleReads

    init(configuration: AppConfiguration, logger: Logger) {
        var poolLogger = logger
        poolLogger[metadataKey: "component"] = "postgres"
        let pool = PostgresConnectionPool(configuration: configuration.postgres(), logger: poolLogger)
        self.pool = pool
        direct = configuration.postgresDirect().map { PostgresConnectionPool(configuration: $0, logger: poolLogger) }
        replicaRouter = configuration.postgresReplica().map { replicaConfiguration in
            var settings = PostgresReplicaRouter.Settings()
            settings.maxLag = configuration.replicaMaxLag
            return PostgresReplicaRouter(
                primary: pool, replica: PostgresConnectionPool(configuration: replicaConfiguration, logger: poolLogger),
                settings: settings, logger: poolLogger
            )
        }
        reads = StaleReads(pool: pool, router: replicaRouter)
    }

    /// The pools beside `pool`, and the replica's router, as services: the direct session,
    /// the replica and its router, in that order.
    var otherPools: [any Service] {
        var services: [any Service] = []
        if let direct { services.append(direct) }
        if let replicaRouter, let replica = replicaRouter.replica { services += [replica, replicaRouter] }
        return services
    }
}

/// Applies pending migrations, waiting up to `databaseStartupTimeout` for the database to
/// accept connections (it may still be starting, e.g. under docker compose).
public func migrate(pool: PostgresConnectionPool, configuration: AppConfiguration, logger: Logger) async throws {
    let migrator = try PostgresMigrator(pool: pool, directory: configuration.sqlDirectory, logger: logger)
    let deadline = ContinuousClock.now + configuration.databaseStartupTimeout
    while true {
        do {
            let applied = try await migrator.migrate()
            logger.info("database schema is current", metadata: ["applied": "\(applied.count)"])
            return
        } catch let error as PostgresError where error.isConnectionFailure && ContinuousClock.now < deadline {
            logger.notice("waiting for the database", metadata: ["error": "\(error)"])
            try await Task.sleep(for: .seconds(1))
        }
    }
}
