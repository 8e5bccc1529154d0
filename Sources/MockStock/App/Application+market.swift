import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The market: its hours, its stored prices and exchange rates, the quote provider the
/// configuration names over them (and the service that makes a simulated or replayed
/// market's prices), the clock, and the follow-ups that whatever stores prices tells.
struct Market {
    let hours: MarketHours
    let store: MarketStore
    let fx: FxStore
    let quotes: any QuoteProvider
    let clock: MarketClock
    /// Runs corporate actions and the matcher after prices are stored (set by `Matching`).
    let followUps: PriceFollowUps
    let pricesStored: PricesStored
    /// The simulated or replayed market's ticks, when the quotes come from one.
    let service: (any Service)?

    init(configuration: AppConfiguration, database: Database, metrics: AppMetrics, started: StartSignal, logger: Logger) {
        hours = MarketHours(schedule: configuration.marketHours)
        store = MarketStore(pool: database.pool, reads: database.reads)
        fx = FxStore(pool: database.pool)
        let followUps = PriceFollowUps(pending: metrics.priceFollowUpsPending, started: started, logger: logger)
        self.followUps = followUps
        // This process uses a price from the moment it stores it: its own quote cache
        // forgets the symbols before whatever stored them answers (other processes hear
        // of them from the stream's announcement). The provider is built after the
        // services that store prices, so it is found through `built`.
        let built = BuiltQuotes()
        pricesStored = { symbols in
            built.forget(symbols)
            followUps.tell(symbols)
        }
        let source = Self.quoteSource(
            configuration: configuration, database: database, hours: hours, store: store, fx: fx,
            pricesStored: pricesStored, logger: logger
        )
        quotes = source.quotes
        built.set(source.quotes)
        service = source.service
        clock = MarketClock(hours: hours, now: configuration.clock) { [quotes] in try await quotes.historyEnd() }
    }

    /// The quotes `QUOTE_PROVIDER` names, remembered for `quoteCacheLifetime` unless they
    /// are fetched over HTTP, and the service that makes them, if any.
    private static func quoteSource(
        configuration: AppConfiguration, database: Database, hours: MarketHours, store: MarketStore, fx: FxStore,
        pricesStored: @escaping PricesStored, logger: Logger
    ) -> (quotes: any QuoteProvider, service: (any Service)?) {
        var quotes: any QuoteProvider
        var service: (any Service)?
        switch configuration.quoteSource {
        case .database:
            quotes = StoredQuoteProvider(store: store, fx: fx)
        case .simulated:
            quotes = StoredQuoteProvider(store: store, fx: fx)
            service = SimulatedMarket(
                pool: database.pool, settings: configuration.simulation, hours: hours, logger: logger, pricesStored: pricesStored
            )
        case .replay:
            let replay = ReplayMarket(pool: database.pool, settings: configuration.replay, logger: logger, pricesStored: pricesStored)
            quotes = StoredQuoteProvider(store: store, fx: fx, replay: replay)
            service = replay
        case .http:
            quotes = HTTPQuoteProvider(settings: configuration.http, store: store, fx: fx, logger: logger, pricesStored: pricesStored)
        }
        if configuration.quoteCacheLifetime > .zero && configuration.quoteSource != .http {
            quotes = CachingQuoteProvider(quotes, lifetime: configuration.quoteCacheLifetime)
        }
        return (quotes, service)
    }
}

/// The process's quote provider, once built.
private final class BuiltQuotes: Sendable {
    private let provider = Mutex<(any QuoteProvider)?>(nil)

    func set(_ quotes: any QuoteProvider) {
        provider.withLock { $0 = quotes }
    }

    func forget(_ symbols: [String]?) {
        provider.withLock { $0 }?.forget(symbols)
    }
}

/// What follows stored prices: corporate actions first, then the order matcher, run in
/// the background by the market's follow-ups and by the periodic sweep.
struct Matching {
    let matcher: OrderMatcher
    let corporateActions: CorporateActionProcessor

    init(configuration: AppConfiguration, database: Database, stores: Stores, market: Market, logger: Logger) {
        let matcher = OrderMatcher(
            orders: stores.orders, trading: stores.trading, hours: market.hours, rules: stores.rules, quotes: market.quotes,
            logger: logger, now: configuration.clock
        )
        let corporateActions = CorporateActionProcessor(
            pool: database.pool, clock: market.clock,
            replayStart: configuration.quoteSource == .replay ? configuration.replay.startDay : nil, logger: logger
        )
        market.followUps.set([
            .init(name: "applying corporate actions") { _ in try await corporateActions.process() },
            .init(name: "matching orders") { symbols in try await matcher.match(symbols: symbols) },
        ])
        self.matcher = matcher
        self.corporateActions = corporateActions
    }
}
