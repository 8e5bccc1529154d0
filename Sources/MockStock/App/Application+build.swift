import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Postgres
import ServiceLifecycle
import Synchronization

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
    // A session of its own on the primary for LISTEN and migrations, when `pool` reaches a
    // transaction pooler; a replica for reads that may be a little stale.
    let direct = configuration.postgresDirect().map { PostgresConnectionPool(configuration: $0, logger: poolLogger) }
    let replicaRouter = configuration.postgresReplica().map { replicaConfiguration in
        var settings = PostgresReplicaRouter.Settings()
        settings.maxLag = configuration.replicaMaxLag
        return PostgresReplicaRouter(
            primary: pool, replica: PostgresConnectionPool(configuration: replicaConfiguration, logger: poolLogger),
            settings: settings, logger: poolLogger
        )
    }
    let reads = StaleReads(pool: pool, router: replicaRouter)
    let accounts = await makeAccountService(configuration: configuration, pool: pool, replica: replicaRouter, logger: logger)
    let market = MarketStore(pool: pool, reads: reads)
    let trading = TradingStore(pool: pool)
    let orders = OrderStore(pool: pool)
    let fx = FxStore(pool: pool)
    let hours = MarketHours(schedule: configuration.marketHours)
    let rules = TradingRulesBook(pool: pool, serverRules: TradingRules(commission: Commission(flat: configuration.tradeFee)))
    let started = StartSignal()
    let followUps = PriceFollowUps(pending: metrics.priceFollowUpsPending, started: started, logger: logger)
    let pricesStored: PricesStored = { symbols in followUps.tell(symbols) }
    var quotes: any QuoteProvider
    var services: [any Service] = [pool, followUps]
    if let direct { services.append(direct) }
    if let replicaRouter, let replica = replicaRouter.replica { services += [replica, replicaRouter] }
    switch configuration.quoteSource {
    case .database:
        quotes = StoredQuoteProvider(store: market, fx: fx)
    case .simulated:
        quotes = StoredQuoteProvider(store: market, fx: fx)
        services.append(SimulatedMarket(
            pool: pool, settings: configuration.simulation, hours: hours, logger: logger, pricesStored: pricesStored
        ))
    case .replay:
        let replay = ReplayMarket(pool: pool, settings: configuration.replay, logger: logger, pricesStored: pricesStored)
        quotes = StoredQuoteProvider(store: market, fx: fx, replay: replay)
        services.append(replay)
    case .http:
        quotes = HTTPQuoteProvider(settings: configuration.http, store: market, fx: fx, logger: logger, pricesStored: pricesStored)
    }
    if configuration.quoteCacheLifetime > .zero && configuration.quoteSource != .http {
        quotes = CachingQuoteProvider(quotes, lifetime: configuration.quoteCacheLifetime)
    }
    let clock = MarketClock(hours: hours, now: configuration.clock) { [quotes] in try await quotes.historyEnd() }
    let matcher = OrderMatcher(
        orders: orders, trading: trading, hours: hours, rules: rules, quotes: quotes, logger: logger, now: configuration.clock
    )
    let corporateActions = CorporateActionProcessor(
        pool: pool, clock: clock, replayStart: configuration.quoteSource == .replay ? configuration.replay.startDay : nil,
        logger: logger
    )
    followUps.set([
        .init(name: "applying corporate actions") { _ in try await corporateActions.process() },
        .init(name: "matching orders") { symbols in try await matcher.match(symbols: symbols) },
    ])

    // Every store once; features share them.
    let standings = StandingsStore(pool: pool, reads: reads, liveLimit: configuration.standings.liveLimit, clock: clock)
    let achievements = AchievementStore(pool: pool)
    let notifications = NotificationStore(pool: pool)
    services.append(StandingsService(
        store: standings, achievements: achievements, settings: configuration.standings, logger: logger, started: started
    ))
    services.append(HousekeepingService(
        chores: [
            .init(name: "corporate actions") { try await corporateActions.process() },
            .init(name: "order sweep") { try await matcher.sweep() },
        ],
        interval: configuration.orderSweepInterval, logger: logger, started: started
    ))
    services.append(HousekeepingService(
        chores: [
            .init(name: "forget old idempotency keys") { try await trading.forgetOldKeys() },
            .init(name: "forget old minute bars") { try await market.forgetOldMinuteBars() },
            .init(name: "forget ended throttle windows") { [store = accounts.throttles.store] in try await store.forgetEndedWindows() },
            .init(name: "forget delivered stream payloads") { _ = try await pool.execute(StreamFeed.forgetDeliveredPayloads) },
        ],
        logger: logger, started: started
    ))
    let backdating = BackdatedTrades(store: trading, clock: clock)
    let orderService = OrderService(
        store: orders, trading: trading, market: market, quotes: quotes, matcher: matcher, hours: hours,
        rules: rules, backdating: backdating, now: configuration.clock
    )
    let tradingService = TradingService(store: trading, market: market, quotes: quotes, rules: rules, backdating: backdating)
    let valueHistory = ValueHistoryService(
        store: ValueHistoryStore(pool: pool), trading: tradingService, clock: clock, fx: fx
    )
    let leagueRisk = LeagueRiskService(
        pool: pool, history: valueHistory, benchmarks: BenchmarkStore(reads: reads), liveLimit: configuration.standings.liveLimit
    )
    services.append(HousekeepingService(
        chores: [.init(name: "league risk figures") { [settings = configuration.standings] in
            _ = try await leagueRisk.refreshDue(small: settings.riskInterval, big: settings.bigRiskInterval)
        }],
        interval: configuration.standings.riskCheckInterval, logger: logger, started: started
    ))
    let alpacaStore = AlpacaStore(pool: pool, zone: MarketHours.newYorkZone, reads: reads)
    let apiKeys = ApiKeyService(store: ApiKeyStore(pool: pool))
    let alpacaOrders = AlpacaOrdersController(orders: orderService, store: orders, trading: trading)
    let features = Features(
        accounts: accounts,
        market: MarketController(store: market, quotes: quotes, hours: hours, now: configuration.clock),
        trading: tradingService,
        orders: orderService,
        leagues: LeagueService(store: LeagueStore(pool: pool, serverRules: rules.serverRules), standings: standings, market: market, quotes: quotes),
        achievements: achievements,
        notifications: notifications,
        admin: AdminController(
            market: MarketAdminStore(pool: pool), prices: PriceImporter(pool: pool), notifications: notifications,
            maxPriceUpload: configuration.adminUploadLimit, pricesStored: pricesStored, zone: clock.zone
        ),
        corporateActions: CorporateActionsController(store: CorporateActionStore(pool: pool), market: market, quotes: quotes),
        apiKeys: apiKeys,
        bots: BotService(store: BotStore(pool: pool, startingCash: configuration.startingCash), keys: apiKeys),
        alpaca: AlpacaController(
            store: alpacaStore, trading: tradingService,
            rules: rules, hours: hours, history: valueHistory, now: configuration.clock
        ),
        alpacaOrders: alpacaOrders,
        alpacaPositions: AlpacaPositionsController(
            trading: tradingService, orders: orderService, alpaca: alpacaStore
        ),
        alpacaMarketData: AlpacaMarketDataController(store: alpacaStore, quotes: quotes, clock: clock),
        analytics: AnalyticsController(
            history: valueHistory,
            performance: PerformanceService(history: valueHistory, benchmarks: BenchmarkStore(reads: reads), market: market),
            profitAndLoss: ProfitAndLossService(reads: reads, trading: tradingService),
            comparison: ComparisonService(store: ComparisonStore(reads: reads), history: valueHistory),
            composition: CompositionService(reads: reads, trading: tradingService, history: valueHistory),
            risk: RiskService(history: valueHistory, benchmarks: BenchmarkStore(reads: reads), market: market)
        ),
        fx: FxController(store: fx, quotes: quotes, history: valueHistory, maxUpload: configuration.adminUploadLimit),
        practice: PracticePortfolios(
            pool: pool, trading: tradingService, market: market, backdating: backdating, clock: clock,
            startingCash: configuration.startingCash
        ),
        journal: JournalStore(pool: pool),
        news: LeagueNewsStore(pool: pool),
        gradebook: Gradebook(pool: pool, standings: standings)
    )
    let auth = AuthMiddleware(tokens: accounts.tokens, versions: accounts.versions)
    let hub = StreamHub(metrics: metrics.stream, queueLimit: configuration.stream.queueLimit)
    let feed = StreamFeed(
        hub: hub, pool: pool, listenPool: direct, orders: orders, notifications: notifications, leagues: features.leagues,
        quotes: quotes, market: market, settings: configuration.stream,
        tokenIsCurrent: { try await auth.isCurrent(userID: $0, version: $1) }, logger: logger, started: started
    )
    services.append(feed)
    let stream = StreamController(hub: hub, feed: feed, auth: auth, leagues: features.leagues, logger: logger)
    let webSocketRouter = stream.router()
    AlpacaStreamController(stream: stream, keys: features.apiKeys).addRoutes(to: webSocketRouter)
    let router = buildRouter(
        configuration: configuration, pool: pool, replica: replicaRouter, metrics: metrics, auth: auth, stream: stream, features: features
    )
    let headTimeout = TimeAmount.milliseconds(configuration.requestHeadTimeout.inMilliseconds)
    var app = Application(
        router: router,
        server: .http1WebSocketUpgrade(
            webSocketRouter: webSocketRouter,
            configuration: .init(
                http1: .init(
                    additionalChannelHandlers: [RequestHeadTimeoutHandler(timeout: headTimeout)],
                    idleTimeout: .milliseconds(configuration.idleTimeout.inMilliseconds)
                ),
                ws: .init(maxFrameSize: StreamController.maxMessageSize, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(5))
            ),
            headTimeout: headTimeout
        ),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "MockStock"),
        services: services,
        onServerRunning: { channel in
            // Where to go, and how to become an admin when nobody is one yet.
            let host = ["0.0.0.0", "::", ""].contains(configuration.host) ? "localhost" : configuration.host
            let port = channel.localAddress?.port ?? configuration.port
            logger.notice("MockStock is ready: open http://\(host.contains(":") ? "[\(host)]" : host):\(port)/ in a browser")
            if (try? await accounts.hasAdmin()) == false {
                logger.notice("No admin yet: run `make admin` (or `mockstock admin create`) to make one")
            }
        },
        logger: logger
    )
    app.beforeServerStarts {
        if configuration.migrateOnStart {
            try await migrate(pool: direct ?? pool, configuration: configuration, logger: logger)
        }
        if let username = configuration.adminUsername, let password = configuration.adminPassword {
            try await accounts.ensureAdmin(username: username, password: password, logger: logger)
        }
        started.open()
    }
    return app
}

/// The features the router serves, each built once over the shared stores.
struct Features {
    let accounts: AccountService
    let market: MarketController
    let trading: TradingService
    let orders: OrderService
    let leagues: LeagueService
    let achievements: AchievementStore
    let notifications: NotificationStore
    let admin: AdminController
    let corporateActions: CorporateActionsController
    let apiKeys: ApiKeyService
    let bots: BotService
    let alpaca: AlpacaController
    let alpacaOrders: AlpacaOrdersController
    let alpacaPositions: AlpacaPositionsController
    let alpacaMarketData: AlpacaMarketDataController
    let analytics: AnalyticsController
    let fx: FxController
    let practice: PracticePortfolios
    let journal: JournalStore
    let news: LeagueNewsStore
    let gradebook: Gradebook
}

/// The account rules wired to their stores; also used by the `admin` command.
public func makeAccountService(
    configuration: AppConfiguration, pool: PostgresConnectionPool, replica: PostgresReplicaRouter? = nil, logger: Logger
) async -> AccountService {
    let secret = configuration.jwtSecret ?? {
        logger.warning("JWT_SECRET is not set: using a random secret, so tokens end when this process does")
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }()
    let users = UserStore(pool: pool, reads: StaleReads(pool: pool, router: replica))
    return AccountService(
        users: users,
        throttles: AccountThrottles(store: ThrottleStore(pool: pool), settings: configuration.throttles),
        hasher: PasswordHasher(parameters: configuration.passwordHashing),
        tokens: await TokenService(secret: secret, lifetime: configuration.jwtLifetime),
        versions: TokenVersionCache(store: users, lifetime: configuration.tokenCacheLifetime),
        startingCash: configuration.startingCash
    )
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

/// The routes and middleware, in the order requests pass through them. Which routes need
/// a token, and how large a body each accepts, is attached to the route groups here.
func buildRouter(
    configuration: AppConfiguration,
    pool: PostgresConnectionPool,
    replica: PostgresReplicaRouter? = nil,
    metrics: AppMetrics,
    auth: AuthMiddleware,
    stream: StreamController,
    features: Features
) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: APIResponseHeadersMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: metrics))
    router.add(middleware: ProblemMiddleware())
    router.add(middleware: WebClientMiddleware(
        publicDirectory: configuration.publicDirectory, chartJSDirectory: configuration.chartJSDirectory
    ))
    let accounts = features.accounts
    let botAuth = BotAuthMiddleware(
        keys: features.apiKeys, auth: auth, throttles: features.accounts.throttles.store, requestsPerMinute: configuration.botRequestsPerMinute
    )
    router.add(middleware: UnmatchedRequestMiddleware(auth: auth, botAuth: botAuth))
    OperationsController(pool: pool, replica: replica, metrics: metrics, openAPIFile: configuration.openAPIFile)
        .addRoutes(to: router.group().add(middleware: BodyLimitMiddleware()))
    let api = router.group("api")
    // Open to everyone: registering and logging in.
    let accountsController = AccountsController(accounts: accounts, proxies: configuration.trustedProxies)
    accountsController.addPublicRoutes(to: api.group().add(middleware: BodyLimitMiddleware()))
    // The stream authenticates in its first message; without an upgrade it is a 426.
    stream.addPlainRoute(to: api.group().add(middleware: BodyLimitMiddleware()))
    AlpacaStreamController.addPlainRoute(to: router.group().add(middleware: BodyLimitMiddleware()))
    // Everything else under /api needs a token, also where no route matches (401, not 404).
    var authenticated = api.group().add(middleware: auth)
    // With a replica, a player's reads wait for their own writes (PlayerWrites).
    let playerWrites = replica.map { _ in PlayerWritesMiddleware(writes: PlayerWrites(horizon: configuration.replicaMaxLag)) }
    if let playerWrites { authenticated = authenticated.add(middleware: playerWrites) }
    let json = authenticated.group().add(middleware: BodyLimitMiddleware())
    accountsController.addRoutes(to: json)
    features.market.addRoutes(to: json)
    let tradingController = TradingController(trading: features.trading)
    tradingController.addRoutes(to: json)
    tradingController.addPracticeRoutes(to: json, practice: features.practice)
    OrdersController(orders: features.orders).addRoutes(to: json)
    LeagueController(leagues: features.leagues, bots: features.bots, gradebook: features.gradebook).addRoutes(to: json)
    JournalController(leagues: features.leagues, store: features.journal).addRoutes(to: json)
    LeagueNewsController(leagues: features.leagues, store: features.news).addRoutes(to: json)
    BotsController(bots: features.bots).addRoutes(to: json)
    AchievementController(store: features.achievements).addRoutes(to: json)
    NotificationController(store: features.notifications).addRoutes(to: json)
    features.corporateActions.addRoutes(to: json)
    features.admin.addRoutes(to: authenticated)
    ApiKeysController(keys: features.apiKeys).addRoutes(to: json)
    features.analytics.addRoutes(to: json)
    features.fx.addRoutes(to: json, admin: authenticated)
    // The Alpaca-compatible API: API keys or tokens, Alpaca's error bodies.
    var v2 = router.group("v2")
        .add(middleware: AlpacaErrorMiddleware())
        .add(middleware: botAuth)
    if let playerWrites { v2 = v2.add(middleware: playerWrites) }
    v2 = v2.add(middleware: BodyLimitMiddleware())
    features.alpaca.addRoutes(to: v2)
    features.alpacaOrders.addRoutes(to: v2)
    features.alpacaPositions.addRoutes(to: v2)
    features.alpacaMarketData.addRoutes(to: v2)
    // Any other /v2 path: Alpaca's 404 (after authentication, as Alpaca answers).
    for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
        v2.on("**", method: method) { _, _ -> Response in throw AppError.notFound("endpoint not found") }
    }
    return router
}
