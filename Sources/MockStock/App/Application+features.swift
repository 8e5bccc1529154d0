import Foundation
import Hummingbird
import Logging
import Postgres

/// The features the router serves, each built once over the shared stores.
struct Features {
    let accounts: AccountService
    let market: MarketController
    let trading: TradingService
    let orders: OrderService
    let practice: PracticePortfolios
    /// A portfolio's value over time; the league risk figures read it too.
    let history: ValueHistoryService
    let leagues: LeagueService
    /// Scenario leagues' own markets and scripted events.
    let markets: LeagueMarketService
    let gradebook: Gradebook
    let journal: JournalStore
    let news: LeagueNewsStore
    let audit: AuditStore
    let rosters: RosterService
    let teams: TeamService
    let personalData: PersonalDataService
    /// Where players' devices reach the server: the join links a host hands out.
    let reachable: ReachableAddresses
    let achievements: AchievementStore
    let notifications: NotificationStore
    let admin: AdminController
    let corporateActions: CorporateActionsController
    let analytics: AnalyticsController
    let fx: FxController
    let apiKeys: ApiKeyService
    let bots: BotService
    let alpaca: AlpacaAPI

    init(configuration: AppConfiguration, database: Database, accounts: AccountService, stores: Stores, market: Market, matching: Matching) {
        let backdating = BackdatedTrades(store: stores.trading, clock: market.clock)
        let trading = TradingService(store: stores.trading, market: market.store, quotes: market.quotes, rules: stores.rules, backdating: backdating)
        let history = ValueHistoryService(store: stores.valueHistory, trading: trading, clock: market.clock, fx: market.fx)
        self.accounts = accounts
        self.market = MarketController(
            store: market.store, quotes: market.quotes, hours: market.hours, now: configuration.clock, leagues: stores.leagues
        )
        self.trading = trading
        orders = OrderService(
            store: stores.orders, trading: stores.trading, market: market.store, quotes: market.quotes, matcher: matching.matcher,
            hours: market.hours, rules: stores.rules, backdating: backdating, now: configuration.clock
        )
        practice = PracticePortfolios(
            pool: database.pool, trading: trading, market: market.store, backdating: backdating, clock: market.clock,
            startingCash: configuration.startingCash
        )
        self.history = history
        markets = LeagueMarketService(
            store: LeagueMarketStore(pool: database.pool), standings: stores.standings, hours: market.hours,
            pricesStored: market.pricesStored, now: configuration.clock
        )
        leagues = LeagueService(store: stores.leagues, standings: stores.standings, market: market.store, quotes: market.quotes, markets: markets)
        gradebook = Gradebook(leagues: stores.leagues, standings: stores.standings)
        journal = stores.journal
        news = stores.news
        audit = AuditStore(pool: database.pool)
        teams = TeamService(store: TeamStore(pool: database.pool))
        rosters = RosterService(
            store: RosterStore(pool: database.pool), hasher: accounts.hasher, versions: accounts.versions, startingCash: configuration.startingCash
        )
        achievements = stores.achievements
        notifications = stores.notifications
        admin = AdminController(
            market: stores.marketAdmin, prices: PriceImporter(pool: database.pool), notifications: stores.notifications,
            maxPriceUpload: configuration.adminUploadLimit, pricesStored: market.pricesStored, zone: market.clock.zone
        )
        corporateActions = CorporateActionsController(store: stores.corporateActions, market: market.store, quotes: market.quotes)
        analytics = Self.analytics(reads: database.reads, stores: stores, market: market, trading: trading, history: history)
        fx = FxController(store: market.fx, quotes: market.quotes, history: history, maxUpload: configuration.adminUploadLimit)
        apiKeys = ApiKeyService(store: stores.apiKeys)
        bots = BotService(store: stores.bots, keys: apiKeys)
        reachable = ReachableAddresses(configuration: configuration)
        personalData = PersonalDataService(store: PersonalDataStore(pool: database.pool), accounts: accounts, keys: apiKeys)
        alpaca = AlpacaAPI(configuration: configuration, stores: stores, market: market, trading: trading, orders: orders, history: history)
    }

    /// A portfolio's past and symbols side by side.
    private static func analytics(
        reads: StaleReads, stores: Stores, market: Market, trading: TradingService, history: ValueHistoryService
    ) -> AnalyticsController {
        AnalyticsController(
            history: history,
            performance: PerformanceService(history: history, benchmarks: stores.benchmarks, market: market.store),
            profitAndLoss: ProfitAndLossService(reads: reads, trading: trading),
            comparison: ComparisonService(store: stores.comparison, history: history),
            composition: CompositionService(reads: reads, trading: trading, history: history),
            risk: RiskService(history: history, benchmarks: stores.benchmarks, market: market.store)
        )
    }
}

/// The Alpaca-compatible API's controllers (`/v2`), over the same trading and orders as
/// the game's own.
struct AlpacaAPI {
    let account: AlpacaController
    let orders: AlpacaOrdersController
    let positions: AlpacaPositionsController
    let marketData: AlpacaMarketDataController

    init(
        configuration: AppConfiguration, stores: Stores, market: Market,
        trading: TradingService, orders: OrderService, history: ValueHistoryService
    ) {
        account = AlpacaController(
            store: stores.alpaca, trading: trading,
            rules: stores.rules, hours: market.hours, history: history, now: configuration.clock
        )
        self.orders = AlpacaOrdersController(orders: orders, store: stores.orders, trading: stores.trading)
        positions = AlpacaPositionsController(trading: trading, orders: orders, alpaca: stores.alpaca, rules: stores.rules)
        marketData = AlpacaMarketDataController(store: stores.alpaca, quotes: market.quotes, clock: market.clock, rules: stores.rules)
    }

    func addRoutes(to v2: RouterGroup<AppRequestContext>) {
        account.addRoutes(to: v2)
        orders.addRoutes(to: v2)
        positions.addRoutes(to: v2)
        marketData.addRoutes(to: v2)
    }
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
