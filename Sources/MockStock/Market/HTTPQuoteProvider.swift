import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// Quotes from an upstream JSON API, for real-world prices; exchange rates too, asked as
/// pairs against the euro (`EURUSD`, `EURJPY`) like symbols.
///
/// - `urlTemplate` holds `{symbols}` (comma-separated, up to `batchSize` per request) or
///   `{symbol}` (one request per symbol).
/// - The upstream answers a JSON array of `{"symbol", "price" (or "latestPrice"),
///   "previousClose"?, "asOf"?}`, an object with such an array under `"quotes"`, or one
///   such object.
/// - Answers are cached for `ttl`; at most `rateLimit` requests go out per
///   `rateInterval` from this process; a request waits at most `timeout`.
/// - When the upstream cannot answer (error, timeout, rate limit), the last known quote
///   serves while it is younger than `maxStaleness`; after that, `503 quote_unavailable`.
///   Last known quotes are kept in the `quotes` table, shared by every server process.
final class HTTPQuoteProvider: QuoteProvider {
    let fetchesOnDemand = true

    struct Settings: Sendable {
        var urlTemplate: String
        var timeout: Duration = .seconds(2)
        var ttl: Duration = .seconds(15)
        var rateLimit = 60
        var rateInterval: Duration = .seconds(60)
        var maxStaleness: Duration = .seconds(900)
        var batchSize = 50
    }

    let settings: Settings
    let store: MarketStore
    let fx: FxStore
    let logger: Logger
    let pricesStored: PricesStored
    private let client: HTTPClient
    private let cache: ExpiringCache<String, PriceQuote>
    /// Units per euro, by currency.
    private let fxCache: ExpiringCache<String, FxQuote>
    private let clock: @Sendable () -> ContinuousClock.Instant
    /// Start times of the requests sent within the last `rateInterval`.
    private let sent = Mutex<[ContinuousClock.Instant]>([])

    init(
        settings: Settings, store: MarketStore, fx: FxStore, logger: Logger, client: HTTPClient = .shared,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }, pricesStored: @escaping PricesStored = { _ in }
    ) {
        self.settings = settings
        self.store = store
        self.fx = fx
        self.logger = logger
        self.pricesStored = pricesStored
        self.client = client
        self.clock = clock
        cache = ExpiringCache(lifetime: settings.ttl, capacity: 10_000, clock: clock)
        fxCache = ExpiringCache(lifetime: settings.ttl, capacity: 1_000, clock: clock)
    }

    func quotes(for symbols: [String]) async throws -> [String: PriceQuote] {
        // A scenario league's instruments are priced by the league's clock, never fetched.
        let leagues = symbols.filter(Symbol.isLeagues)
        var result = leagues.isEmpty ? [:] : try await store.prices(for: leagues)
        let names = try await store.names(for: symbols.filter { !Symbol.isLeagues($0) })
        let known = symbols.filter { names[$0] != nil }
        result.merge(cache.values(for: known)) { $1 }
        let missing = known.filter { result[$0] == nil }
        guard !missing.isEmpty else { return result }

        let fresh = await fetchFresh(missing)
        if !fresh.isEmpty {
            cache.store(Dictionary(fresh.map { ($0.symbol, $0) }) { $1 })
            try await store.saveQuotes(fresh, source: "http")
            await pricesStored(fresh.map(\.symbol))
            for quote in fresh { result[quote.symbol] = quote }
        }

        let unanswered = missing.filter { result[$0] == nil }
        guard !unanswered.isEmpty else { return result }
        let lastKnown = try await store.prices(for: unanswered)
        let oldest = Date().addingTimeInterval(-settings.maxStaleness.inSeconds)
        for symbol in unanswered {
            guard let quote = lastKnown[symbol], quote.asOf >= oldest else {
                throw MarketError.sourceUnavailable(symbol)
            }
            result[symbol] = quote
        }
        return result
    }

    /// Exchange rates as pairs against the euro (`EURUSD`: dollars per euro), from the
    /// same upstream, cache and rate limit as stock quotes. When it cannot answer: the last
    /// rate fetched within `maxStaleness` (by any process: `fx_quotes`), else the ECB's
    /// latest reference rate.
    func fxPerEuro(_ currencies: [String]) async throws -> [String: FxQuote] {
        var result = fxCache.values(for: currencies)
        let missing = currencies.filter { result[$0] == nil && $0 != "EUR" }
        guard !missing.isEmpty else { return result }
        let fresh = Dictionary(await fetchFresh(missing.map { "EUR" + $0 }).map {
            (String($0.symbol.dropFirst(3)), FxQuote(rate: $0.price, asOf: $0.asOf))
        }) { $1 }
        fxCache.store(fresh)
        try await fx.save(fresh, source: "http")
        result.merge(fresh) { $1 }
        let unanswered = missing.filter { result[$0] == nil }
        guard !unanswered.isEmpty else { return result }
        let now = Date()
        let lastKnown = try await fx.now(
            unanswered, day: nil, liveSince: now.addingTimeInterval(-settings.maxStaleness.inSeconds)
        )
        return result.merging(lastKnown) { $1 }
    }

    /// The quotes of `symbols` the upstream gives now, within the rate limit; a request
    /// that fails leaves its symbols out.
    private func fetchFresh(_ symbols: [String]) async -> [PriceQuote] {
        var fresh: [PriceQuote] = []
        for group in requests(for: symbols) {
            guard takeRateBudget() else {
                logger.notice("upstream rate limit reached; serving last known quotes")
                break
            }
            do {
                let wanted = Set(group.symbols)
                fresh += try await fetch(group.url).filter { wanted.contains($0.symbol) }
            } catch {
                logger.warning("upstream quote request failed", metadata: ["error": "\(error)"])
            }
        }
        return fresh
    }

    private struct UpstreamRequest {
        let url: String
        let symbols: [String]
    }

    private func requests(for symbols: [String]) -> [UpstreamRequest] {
        if settings.urlTemplate.contains("{symbols}") {
            return stride(from: 0, to: symbols.count, by: max(settings.batchSize, 1)).map { start in
                let batch = Array(symbols[start..<min(start + settings.batchSize, symbols.count)])
                return UpstreamRequest(
                    url: settings.urlTemplate.replacingOccurrences(of: "{symbols}", with: batch.joined(separator: ",")),
                    symbols: batch
                )
            }
        }
        return symbols.map {
            UpstreamRequest(url: settings.urlTemplate.replacingOccurrences(of: "{symbol}", with: $0), symbols: [$0])
        }
    }

    /// Whether one more request fits in the rate limit now; if so it is counted.
    private func takeRateBudget() -> Bool {
        let now = clock()
        return sent.withLock { sent in
            sent.removeAll { now - $0 >= settings.rateInterval }
            guard sent.count < settings.rateLimit else { return false }
            sent.append(now)
            return true
        }
    }

    private func fetch(_ url: String) async throws -> [PriceQuote] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let timeout = TimeAmount.nanoseconds(Int64(settings.timeout.inSeconds * 1e9))
        let response = try await client.execute(request, timeout: timeout)
        guard response.status == .ok else { throw UpstreamError.status(Int(response.status.code)) }
        let body = try await response.body.collect(upTo: 4 << 20)
        return try Self.decode(Data(body.readableBytesView))
    }

    enum UpstreamError: Error {
        case status(Int)
        case unreadable
    }

    struct UpstreamQuote: Decodable {
        let symbol: String
        let price: DecimalInput?
        let latestPrice: DecimalInput?
        let previousClose: DecimalInput?
        let asOf: Date?
    }

    private struct Wrapped: Decodable {
        let quotes: [UpstreamQuote]
    }

    static func decode(_ data: Data) throws -> [PriceQuote] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let items: [UpstreamQuote]
        if let array = try? decoder.decode([UpstreamQuote].self, from: data) {
            items = array
        } else if let wrapped = try? decoder.decode(Wrapped.self, from: data) {
            items = wrapped.quotes
        } else if let single = try? decoder.decode(UpstreamQuote.self, from: data) {
            items = [single]
        } else {
            throw UpstreamError.unreadable
        }
        let now = Date()
        return items.compactMap { item in
            guard let price = (item.price ?? item.latestPrice)?.value, price > 0 else { return nil }
            let previous = item.previousClose?.value
            return PriceQuote(
                symbol: Symbol.normalize(item.symbol), price: price,
                previousClose: previous.flatMap { $0 > 0 ? $0 : nil }, asOf: min(item.asOf ?? now, now)
            )
        }
    }


}
