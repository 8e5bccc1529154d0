import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// The live stream: the hub that fans events out to sockets, the feed that listens to the
/// database (a background service), and the WebSocket routes, the game's and Alpaca's.
struct LiveStream {
    let feed: StreamFeed
    let controller: StreamController
    let webSocketRouter: Router<StreamRequestContext>

    init(
        configuration: AppConfiguration, database: Database, stores: Stores, market: Market, features: Features,
        auth: AuthMiddleware, metrics: AppMetrics, started: StartSignal, logger: Logger
    ) {
        let hub = StreamHub(metrics: metrics.stream, queueLimit: configuration.stream.queueLimit)
        feed = StreamFeed(
            hub: hub, pool: database.pool, listenPool: database.direct, orders: stores.orders, notifications: stores.notifications,
            leagues: features.leagues, quotes: market.quotes, market: market.store, settings: configuration.stream,
            tokenIsCurrent: { try await auth.isCurrent(userID: $0, version: $1) },
            forgetCredentials: .init(user: { auth.versions.forget(userID: $0) }, keys: { [keys = features.apiKeys] in keys.forget(keyIDs: $0) }),
            logger: logger, started: started
        )
        controller = StreamController(hub: hub, feed: feed, auth: auth, leagues: features.leagues, logger: logger)
        webSocketRouter = controller.router()
        AlpacaStreamController(stream: controller, keys: features.apiKeys).addRoutes(to: webSocketRouter)
        AlpacaDataStreamController(stream: controller, keys: features.apiKeys, rules: stores.rules).addRoutes(to: webSocketRouter)
    }
}

/// HTTP/1.1 with the WebSocket upgrade, every request head timed, idle connections
/// closed, sockets pinged.
func httpServer(configuration: AppConfiguration, webSocketRouter: Router<StreamRequestContext>) -> HTTPServerBuilder {
    let headTimeout = TimeAmount.milliseconds(configuration.requestHeadTimeout.inMilliseconds)
    return .http1WebSocketUpgrade(
        webSocketRouter: webSocketRouter,
        configuration: .init(
            http1: .init(
                additionalChannelHandlers: [RequestHeadTimeoutHandler(timeout: headTimeout)],
                idleTimeout: .milliseconds(configuration.idleTimeout.inMilliseconds)
            ),
            ws: .init(maxFrameSize: StreamController.maxMessageSize, autoPing: .enabled(timePeriod: .seconds(30)), closeTimeout: .seconds(5))
        ),
        headTimeout: headTimeout
    )
}

/// The routes and middleware, in the order requests pass through them. Which routes need
/// a token, and how large a body each accepts, is attached to the route groups here.
func buildRouter(
    configuration: AppConfiguration,
    database: Database,
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
    let botAuth = BotAuthMiddleware(
        keys: features.apiKeys, auth: auth,
        budgets: BotBudgets(store: features.accounts.throttles.store, requestsPerMinute: configuration.botRequestsPerMinute)
    )
    router.add(middleware: UnmatchedRequestMiddleware(auth: auth, botAuth: botAuth))
    OperationsController(pool: database.pool, replica: database.replicaRouter, metrics: metrics, openAPIFile: configuration.openAPIFile)
        .addRoutes(to: router.group().add(middleware: BodyLimitMiddleware()))
    // With a replica, a player's reads wait for their own writes (PlayerWrites).
    let playerWrites = database.replicaRouter.map { _ in PlayerWritesMiddleware(writes: PlayerWrites(horizon: configuration.replicaMaxLag)) }
    addAPIRoutes(to: router, configuration: configuration, auth: auth, playerWrites: playerWrites, stream: stream, features: features)
    addAlpacaRoutes(to: router, botAuth: botAuth, playerWrites: playerWrites, alpaca: features.alpaca)
    return router
}

/// `/api`: registering and logging in open to everyone, the stream's plain route, and
/// everything else behind a token (also where no route matches: 401, not 404).
func addAPIRoutes(
    to router: Router<AppRequestContext>, configuration: AppConfiguration, auth: AuthMiddleware,
    playerWrites: PlayerWritesMiddleware?, stream: StreamController, features: Features
) {
    let api = router.group("api")
    let accountsController = AccountsController(accounts: features.accounts, proxies: configuration.trustedProxies)
    accountsController.addPublicRoutes(to: api.group().add(middleware: BodyLimitMiddleware()))
    // The stream authenticates in its first message; without an upgrade it is a 426.
    stream.addPlainRoute(to: api.group().add(middleware: BodyLimitMiddleware()))
    AlpacaStreamController.addPlainRoute(to: router.group().add(middleware: BodyLimitMiddleware()))
    AlpacaDataStreamController.addPlainRoutes(to: router.group().add(middleware: BodyLimitMiddleware()))
    var authenticated = api.group().add(middleware: auth)
    if let playerWrites { authenticated = authenticated.add(middleware: playerWrites) }
    let json = authenticated.group().add(middleware: BodyLimitMiddleware())
    accountsController.addRoutes(to: json)
    PersonalDataController(personalData: features.personalData, leagues: features.leagues, proxies: configuration.trustedProxies)
        .addRoutes(to: json)
    addPlayerRoutes(to: json, admin: authenticated, features: features)
}

/// The game's routes behind a token: `json` limits bodies; the admin's routes on `admin`
/// set their own limits.
func addPlayerRoutes(to json: RouterGroup<AppRequestContext>, admin: RouterGroup<AppRequestContext>, features: Features) {
    features.market.addRoutes(to: json)
    let tradingController = TradingController(trading: features.trading)
    tradingController.addRoutes(to: json)
    tradingController.addPracticeRoutes(to: json, practice: features.practice)
    OrdersController(orders: features.orders).addRoutes(to: json)
    LeagueController(leagues: features.leagues, bots: features.bots, gradebook: features.gradebook, audit: features.audit,
                     reachable: features.reachable).addRoutes(to: json)
    AuditController(store: features.audit, leagues: features.leagues).addRoutes(to: json)
    RosterController(rosters: features.rosters, leagues: features.leagues).addRoutes(to: json)
    TeamController(teams: features.teams, leagues: features.leagues).addRoutes(to: json)
    LeagueMarketController(markets: features.markets, leagues: features.leagues).addRoutes(to: json)
    JournalController(leagues: features.leagues, store: features.journal).addRoutes(to: json)
    LeagueNewsController(leagues: features.leagues, store: features.news).addRoutes(to: json)
    BotsController(bots: features.bots).addRoutes(to: json)
    AchievementController(store: features.achievements).addRoutes(to: json)
    NotificationController(store: features.notifications).addRoutes(to: json)
    features.corporateActions.addRoutes(to: json)
    features.admin.addRoutes(to: admin)
    ApiKeysController(keys: features.apiKeys).addRoutes(to: json)
    features.analytics.addRoutes(to: json)
    features.fx.addRoutes(to: json, admin: admin)
}

/// The Alpaca-compatible API (`/v2`): API keys or tokens, Alpaca's error bodies.
func addAlpacaRoutes(
    to router: Router<AppRequestContext>, botAuth: BotAuthMiddleware, playerWrites: PlayerWritesMiddleware?, alpaca: AlpacaAPI
) {
    var v2 = router.group("v2")
        .add(middleware: AlpacaErrorMiddleware())
        .add(middleware: botAuth)
    if let playerWrites { v2 = v2.add(middleware: playerWrites) }
    v2 = v2.add(middleware: BodyLimitMiddleware())
    alpaca.addRoutes(to: v2)
    // Any other /v2 path: Alpaca's 404 (after authentication, as Alpaca answers).
    for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
        v2.on("**", method: method) { _, _ -> Response in throw AppError.notFound("endpoint not found") }
    }
}
