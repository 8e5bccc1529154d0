import Foundation
import Hummingbird
import Logging
import NIOCore
import Postgres
import ServiceLifecycle

/// Builds the server: database pool, migrations and admin account before start-up,
/// router and middleware. The parts, in the order they stand on each other: the database
/// (`Database`), the accounts, the market (`Market`: hours, quotes, clock), every other
/// store once (`Stores`), what follows stored prices (`Matching`), the features
/// (`Features`), the live stream (`LiveStream`), the background services
/// (`backgroundServices`) and HTTP (`buildRouter`, `httpServer`).
public func buildApplication(
    configuration: AppConfiguration,
    logger: Logger,
    metrics: AppMetrics = AppMetrics()
) async throws -> some ApplicationProtocol {
    try configuration.validateForEnvironment()
    let database = Database(configuration: configuration, logger: logger)
    let accounts = await makeAccountService(
        configuration: configuration, pool: database.pool, replica: database.replicaRouter, logger: logger
    )
    // Opened once migrations have run and the admin exists; background work waits for it.
    let started = StartSignal()
    let market = Market(configuration: configuration, database: database, metrics: metrics, started: started, logger: logger)
    let stores = Stores(configuration: configuration, database: database, market: market)
    let matching = Matching(configuration: configuration, database: database, stores: stores, market: market, logger: logger)
    let features = Features(
        configuration: configuration, database: database, accounts: accounts, stores: stores, market: market, matching: matching
    )
    let auth = AuthMiddleware(tokens: accounts.tokens, versions: accounts.versions)
    let stream = LiveStream(
        configuration: configuration, database: database, stores: stores, market: market, features: features, auth: auth,
        metrics: metrics, started: started, logger: logger
    )
    var app = Application(
        router: buildRouter(configuration: configuration, database: database, metrics: metrics, auth: auth, stream: stream.controller, features: features),
        server: httpServer(configuration: configuration, webSocketRouter: stream.webSocketRouter),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "MockStock"),
        services: backgroundServices(
            configuration: configuration, database: database, market: market, stores: stores, matching: matching,
            features: features, feed: stream.feed, started: started, logger: logger
        ),
        onServerRunning: announceReady(configuration: configuration, accounts: accounts, logger: logger),
        logger: logger
    )
    app.beforeServerStarts {
        try await prepareDatabase(configuration: configuration, database: database, accounts: accounts, logger: logger)
        started.open()
    }
    return app
}

/// Before the server starts: pending migrations (on the direct session when there is
/// one), then the admin account the configuration names.
func prepareDatabase(configuration: AppConfiguration, database: Database, accounts: AccountService, logger: Logger) async throws {
    if configuration.migrateOnStart {
        try await migrate(pool: database.direct ?? database.pool, configuration: configuration, logger: logger)
    }
    if let username = configuration.adminUsername, let password = configuration.adminPassword {
        try await accounts.ensureAdmin(username: username, password: password, logger: logger)
    }
}

/// Once the server listens: where to go, and how to become an admin when nobody is one yet.
func announceReady(
    configuration: AppConfiguration, accounts: AccountService, logger: Logger
) -> @Sendable (any Channel) async -> Void {
    { channel in
        let host = ["0.0.0.0", "::", ""].contains(configuration.host) ? "localhost" : configuration.host
        let port = channel.localAddress?.port ?? configuration.port
        logger.notice("MockStock is ready: open http://\(host.contains(":") ? "[\(host)]" : host):\(port)/ in a browser")
        if (try? await accounts.hasAdmin()) == false {
            logger.notice("No admin yet: run `make admin` (or `mockstock admin create`) to make one")
        }
    }
}
