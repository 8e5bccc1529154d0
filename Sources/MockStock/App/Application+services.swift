import Foundation
import Logging
import ServiceLifecycle

/// What runs beside the HTTP server, in the order it starts. The group stops it in the
/// reverse order once the server has drained: the stream's feed first, the database pools
/// last, so nothing still running loses its connections. The follow-ups, the standings,
/// the chores and the feed wait for `started` (migrations done) before they work.
func backgroundServices(
    configuration: AppConfiguration, database: Database, market: Market, stores: Stores, matching: Matching,
    features: Features, feed: StreamFeed, started: StartSignal, logger: Logger
) -> [any Service] {
    var services: [any Service] = [database.pool, market.followUps]
    services += database.otherPools
    if let ticks = market.service { services.append(ticks) }
    services.append(StandingsService(
        store: stores.standings, achievements: stores.achievements, settings: configuration.standings, logger: logger, started: started
    ))
    services += housekeeping(
        configuration: configuration, database: database, market: market, stores: stores, matching: matching,
        features: features, started: started, logger: logger
    )
    services.append(feed)
    return services
}

/// The periodic chores: catching up with corporate actions, resting orders and the margin
/// leagues' closes (every `orderSweepInterval`), forgetting what is no longer needed, and the leagues' risk
/// figures (every `riskCheckInterval`).
func housekeeping(
    configuration: AppConfiguration, database: Database, market: Market, stores: Stores, matching: Matching,
    features: Features, started: StartSignal, logger: Logger
) -> [any Service] {
    let pool = database.pool, corporateActions = matching.corporateActions, matcher = matching.matcher
    let marginCloses = MarginCloses(
        pool: pool, trading: stores.trading, rules: stores.rules, quotes: market.quotes, hours: market.hours,
        now: configuration.clock, logger: logger
    )
    let leagueRisk = LeagueRiskService(
        pool: pool, history: features.history, benchmarks: stores.benchmarks, liveLimit: configuration.standings.liveLimit
    )
    return [
        HousekeepingService(
            chores: [
                .init(name: "corporate actions") { try await corporateActions.process() },
                .init(name: "order sweep") { try await matcher.sweep() },
                .init(name: "margin closes") { try await marginCloses.run() },
                .init(name: "scenario league clocks") { [markets = features.markets] in try await markets.advanceDue() },
            ],
            interval: configuration.orderSweepInterval, logger: logger, started: started
        ),
        HousekeepingService(
            chores: [
                .init(name: "forget old idempotency keys") { [trading = stores.trading] in try await trading.forgetOldKeys() },
                .init(name: "forget old minute bars") { [market = market.store] in try await market.forgetOldMinuteBars() },
                .init(name: "forget ended throttle windows") { [store = features.accounts.throttles.store] in try await store.forgetEndedWindows() },
                .init(name: "forget delivered stream payloads") { _ = try await pool.execute(StreamFeed.forgetDeliveredPayloads) },
                .init(name: "erase managed students past their league's retention") { [personalData = features.personalData] in
                    try await personalData.eraseExpiredManaged()
                },
            ],
            logger: logger, started: started
        ),
        HousekeepingService(
            chores: [.init(name: "league risk figures") { [settings = configuration.standings] in
                _ = try await leagueRisk.refreshDue(small: settings.riskInterval, big: settings.bigRiskInterval)
            }],
            interval: configuration.standings.riskCheckInterval, logger: logger, started: started
        ),
    ]
}
