import Foundation

/// Where prices come from. Every trade and valuation asks the configured provider; what
/// each one promises about freshness is in docs/market.md.
public protocol QuoteProvider: Sendable {
    /// Current quotes for upper-case symbols; symbols without a price are left out.
    /// Throws `MarketError.sourceUnavailable` when no usable price can be had.
    func quotes(for symbols: [String]) async throws -> [String: PriceQuote]

    /// The last day of history clients may see (the replay day), or nil for all of it.
    func historyEnd() async throws -> String?

    /// Told that new prices of `symbols` (nil: of every symbol) were stored, by this
    /// process (at once, before whatever stored them answers) or by another (the live
    /// stream's announcement), so that nothing cached here outlives them.
    func forget(_ symbols: [String]?)

    /// Exchange rates now: units of each of `currencies` (never the euro) per euro;
    /// currencies without a rate are left out.
    func fxPerEuro(_ currencies: [String]) async throws -> [String: FxQuote]

    /// Whether prices and rates are fetched when asked for (and then stored), rather than
    /// stored as the market moves: readers of stored prices ask first.
    var fetchesOnDemand: Bool { get }
}

extension QuoteProvider {
    func historyEnd() async throws -> String? { nil }

    var fetchesOnDemand: Bool { false }

    func forget(_ symbols: [String]?) {}

    /// Units of `to` per one `from` now, through the euro (dated by the older of the two
    /// rates), or nil when either currency has no rate.
    func fxRate(from: String, to: String) async throws -> FxQuote? {
        try await fxRates(base: from, currencies: [to])[to]
    }

    /// Units of each of `currencies` per one `base` now; those without a rate are left out.
    func fxRates(base: String, currencies: [String]) async throws -> [String: FxQuote] {
        let asked = Set(currencies + [base]).subtracting(["EUR"]).sorted()
        var perEuro = try await fxPerEuro(asked)
        perEuro["EUR"] = FxQuote(rate: 1, asOf: .distantFuture)
        guard let from = perEuro[base] else { return [:] }
        var rates: [String: FxQuote] = [:]
        for currency in currencies {
            if currency == base {
                rates[currency] = FxQuote(rate: 1, asOf: Date())
            } else if let to = perEuro[currency] {
                rates[currency] = FxQuote(rate: to.rate / from.rate, asOf: min(from.asOf, to.asOf))
            }
        }
        return rates
    }

    /// The quote for one known instrument: `MarketError.noPrice` when it has none.
    func quote(for symbol: String) async throws -> PriceQuote {
        guard let quote = try await quotes(for: [symbol])[symbol] else {
            throw MarketError.noPrice(symbol)
        }
        return quote
    }

    /// The quote to trade a symbol at (a stored symbol: a scenario league's instrument
    /// too): `unknownSymbol` when no instrument has it, `noPrice` for one without a price
    /// yet (the instruments are read only then).
    func quote(for symbol: String, knownIn market: MarketStore) async throws -> PriceQuote {
        guard Symbol.isValid(Symbol.shown(symbol)) else { throw MarketError.unknownSymbol(symbol) }
        guard let quote = try await quotes(for: [symbol])[symbol] else {
            if try await market.names(for: [symbol])[symbol] == nil { throw MarketError.unknownSymbol(symbol) }
            throw MarketError.noPrice(symbol)
        }
        return quote
    }
}

/// Told after new prices are stored, with their symbols (nil: every symbol), so the
/// orders they cross fill: returns at once, the follow-ups run in the background
/// (`PriceFollowUps`); never throws (a failure waits for the next sweep).
public typealias PricesStored = @Sendable (_ symbols: [String]?) async -> Void

/// Prices kept in the database: the `quotes` table (set by admins, or by the simulated or
/// replayed market), falling back to each instrument's last daily close.
struct StoredQuoteProvider: QuoteProvider {
    let store: MarketStore
    let fx: FxStore
    /// Set when replaying history, which also hides the days after the replay day.
    var replay: ReplayMarket?

    func quotes(for symbols: [String]) async throws -> [String: PriceQuote] {
        try await store.prices(for: symbols)
    }

    func historyEnd() async throws -> String? {
        try await replay?.day(at: Date())
    }

    /// Rates set in `fx_quotes` (the simulated market's), else the latest reference rates;
    /// when replaying, the replay day's reference rates.
    func fxPerEuro(_ currencies: [String]) async throws -> [String: FxQuote] {
        if let replay, let day = try await replay.day(at: Date()) {
            return try await fx.now(currencies, day: day, liveSince: nil)
        }
        return try await fx.now(currencies, day: nil, liveSince: Date(timeIntervalSince1970: 0))
    }
}

/// Keeps each quote for `lifetime`, so busy symbols are read from the database a few
/// times a second rather than on every trade. A price stored by this process is used from
/// the moment it is stored (`Market.pricesStored` forgets it here first); one stored by
/// another process is used once the stream's announcement of it arrives (milliseconds),
/// and is at most `lifetime` late should the announcement be lost.
final class CachingQuoteProvider: QuoteProvider {
    private let source: any QuoteProvider
    private let cache: ExpiringCache<String, PriceQuote>
    private let fxCache: ExpiringCache<String, FxQuote>

    init(_ source: any QuoteProvider, lifetime: Duration, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.source = source
        cache = ExpiringCache(lifetime: lifetime, capacity: 10_000, clock: clock)
        fxCache = ExpiringCache(lifetime: lifetime, capacity: 1_000, clock: clock)
    }

    func fxPerEuro(_ currencies: [String]) async throws -> [String: FxQuote] {
        try await fxCache.values(for: currencies) { try await source.fxPerEuro($0) }
    }

    func quotes(for symbols: [String]) async throws -> [String: PriceQuote] {
        try await cache.values(for: symbols) { try await source.quotes(for: $0) }
    }

    var fetchesOnDemand: Bool { source.fetchesOnDemand }

    func historyEnd() async throws -> String? {
        try await source.historyEnd()
    }

    func forget(_ symbols: [String]?) {
        if let symbols { cache.forget(symbols) } else { cache.forgetAll() }
        source.forget(symbols)
    }
}
