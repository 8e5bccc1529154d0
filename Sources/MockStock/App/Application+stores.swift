import Foundation

/// Every store the features, the background services and the stream share, each built
/// once, here. Two kinds are built elsewhere, also once: the market's prices and exchange
/// rates with the market (`Market`), which its quotes and clock stand on, and the
/// accounts' users and throttles with the account service (`makeAccountService`).
struct Stores {
    let trading: TradingStore
    let orders: OrderStore
    /// Each portfolio's trading rules (the server's, or its league's), remembered.
    let rules: TradingRulesBook
    let leagues: LeagueStore
    let standings: StandingsStore
    let achievements: AchievementStore
    let notifications: NotificationStore
    let valueHistory: ValueHistoryStore
    let benchmarks: BenchmarkStore
    let comparison: ComparisonStore
    let marketAdmin: MarketAdminStore
    let corporateActions: CorporateActionStore
    let journal: JournalStore
    let news: LeagueNewsStore
    let apiKeys: ApiKeyStore
    let alpaca: AlpacaStore
    let bots: BotStore

    init(configuration: AppConfiguration, database: Database, market: Market) {
        let pool = database.pool, reads = database.reads
        trading = TradingStore(pool: pool, reads: reads)
        orders = OrderStore(pool: pool)
        rules = TradingRulesBook(pool: pool, serverRules: TradingRules(commission: Commission(flat: configuration.tradeFee)),
                                 volumes: DailyVolumes(pool: pool, reads: reads, clock: market.clock))
        leagues = LeagueStore(pool: pool, serverRules: rules.serverRules)
        standings = StandingsStore(pool: pool, reads: reads, liveLimit: configuration.standings.liveLimit, clock: market.clock)
        achievements = AchievementStore(pool: pool)
        notifications = NotificationStore(pool: pool)
        valueHistory = ValueHistoryStore(pool: pool)
        benchmarks = BenchmarkStore(reads: reads)
        comparison = ComparisonStore(reads: reads)
        marketAdmin = MarketAdminStore(pool: pool)
        corporateActions = CorporateActionStore(pool: pool)
        journal = JournalStore(pool: pool)
        news = LeagueNewsStore(pool: pool)
        apiKeys = ApiKeyStore(pool: pool)
        alpaca = AlpacaStore(pool: pool, zone: MarketHours.newYorkZone, reads: reads)
        bots = BotStore(pool: pool, startingCash: configuration.startingCash)
    }
}
