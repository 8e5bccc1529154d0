import Foundation
import Hummingbird
import Logging
import NIOCore
import Postgres
import ServiceLifecycle

/// Builds the server: database pool, migrations and admin account before start-up,
/// router and middleware.
public func buildApplication(
    configuration: AppConfiguration,
    logger: Logger,
    metrics: AppMetrics = AppMetrics()
) async throws -> some ApplicationProtocol {
    try configuration.validateForEnvironment()
    var poolLogger = logger
    poolLogger[metadataKey: "component"] = "postgres"
    let pool = PostgresConnectionPool(configuration: configuration.postgres(), logger: poolLogger)
    let accounts = await makeAccountService(configuration: configuration, pool: pool, logger: logger)
    let market = MarketStore(pool: pool)
    var quotes: any QuoteProvider
    let started = StartSignal()
    var services: [any Service] = [
        pool,
        StandingsService(
            store: StandingsStore(pool: pool, liveLimit: configuration.standings.liveLimit),
            achievements: AchievementStore(pool: pool), settings: configuration.standings, logger: logger, started: started
        ),
    ]
    switch configuration.quoteSource {
    case .database:
        quotes = StoredQuoteProvider(store: market)
    case .simulated:
        quotes = StoredQuoteProvider(store: market)
        services.append(SimulatedMarket(pool: pool, settings: configuration.simulation, logger: logger))
    case .replay:
        let replay = ReplayMarket(pool: pool, settings: configuration.replay, logger: logger)
        quotes = StoredQuoteProvider(store: market, replay: replay)
        services.append(replay)
    case .http:
        quotes = HTTPQuoteProvider(settings: configuration.http, store: market, logger: logger)
    }
    if configuration.quoteCacheLifetime > .zero && configuration.quoteSource != .http {
        quotes = CachingQuoteProvider(quotes, lifetime: configuration.quoteCacheLifetime)
    }
    let router = buildRouter(
        configuration: configuration, pool: pool, metrics: metrics, accounts: accounts, market: market, quotes: quotes
    )
    let headTimeout = TimeAmount.seconds(Int64(configuration.requestHeadTimeoutSeconds))
    var app = Application(
        router: router,
        server: .http1(configuration: .init(
            additionalChannelHandlers: [RequestHeadTimeoutHandler(timeout: headTimeout)],
            idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds))
        )),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "MockStock"),
        services: services,
        logger: logger
    )
    app.beforeServerStarts {
        if configuration.migrateOnStart {
            try await migrate(pool: pool, configuration: configuration, logger: logger)
        }
        if let username = configuration.adminUsername, let password = configuration.adminPassword {
            try await accounts.ensureAdmin(username: username, password: password, logger: logger)
        }
        started.open()
    }
    return app
}

/// The account rules wired to their stores; also used by the `admin` command.
public func makeAccountService(configuration: AppConfiguration, pool: PostgresConnectionPool, logger: Logger) async -> AccountService {
    let secret = configuration.jwtSecret ?? {
        logger.warning("JWT_SECRET is not set: using a random secret, so tokens end when this process does")
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()
    let users = UserStore(pool: pool)
    return AccountService(
        users: users,
        throttle: LoginThrottle(pool: pool),
        hasher: PasswordHasher(parameters: configuration.passwordHashing),
        tokens: await TokenService(secret: secret, lifetime: configuration.jwtLifetime),
        versions: TokenVersionCache(store: users, lifetime: configuration.tokenCacheLifetime),
        startingCash: configuration.startingCash
    )
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
    metrics: AppMetrics,
    accounts: AccountService,
    market: MarketStore,
    quotes: any QuoteProvider
) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: WebClientMiddleware(
        publicDirectory: configuration.publicDirectory, chartJSDirectory: configuration.chartJSDirectory
    ))
    router.add(middleware: BodyLimitMiddleware(
        maxBytes: AppRequestContext.maxBodySize,
        routeLimits: ["/api/admin/prices": AdminController.maxPriceUpload]
    ))
    router.add(middleware: AuthMiddleware(tokens: accounts.tokens, versions: accounts.versions))
    OperationsController(pool: pool, metrics: metrics, openAPIFile: configuration.openAPIFile).addRoutes(to: router)
    let api = router.group("api")
    AccountsController(accounts: accounts).addRoutes(to: api)
    MarketController(store: market, quotes: quotes).addRoutes(to: api)
    let trading = TradingService(store: TradingStore(pool: pool), market: market, quotes: quotes, fee: configuration.tradeFee)
    TradingController(trading: trading).addRoutes(to: api)
    LeagueController(store: LeagueStore(pool: pool), standings: StandingsStore(pool: pool, liveLimit: configuration.standings.liveLimit))
        .addRoutes(to: api)
    AchievementController(store: AchievementStore(pool: pool)).addRoutes(to: api)
    let notifications = NotificationStore(pool: pool)
    NotificationController(store: notifications).addRoutes(to: api)
    AdminController(market: MarketAdminStore(pool: pool), prices: PriceImporter(pool: pool), notifications: notifications)
        .addRoutes(to: api)
    return router
}
