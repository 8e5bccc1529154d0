import Foundation
import Hummingbird

/// Quotes, the marketplace, movers, stock pages and charts.
struct MarketController {
    let store: MarketStore
    let quotes: any QuoteProvider
    let hours: MarketHours
    let now: @Sendable () -> Date
    /// For `leagueId`: the scenario leagues the caller is a member of.
    let leagues: LeagueStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("market/clock", use: clock)
        api.get("stock/symbols", use: batch)
        api.get("stock/market", use: market)
        api.get("stock/movers", use: movers)
        api.get("stock/{symbol}", use: detail)
        api.get("stock/{symbol}/chart", use: chart)
    }

    /// Whether the market is open now, its next open and close, and the days its price
    /// history covers (charts, returns and back-dated trades are within them).
    @Sendable func clock(_ request: Request, context: AppRequestContext) async throws -> MarketClockBody {
        let span = try await store.historySpan(through: try await quotes.historyEnd())
        return MarketClockBody(clock: hours.clock(at: now()), history: span.map { PriceHistorySpan(from: $0.from, through: $0.through) })
    }

    /// Quotes for the known symbols among those asked, in the order asked.
    @Sendable func batch(_ request: Request, context: AppRequestContext) async throws -> [Quote] {
        let symbols = (request.uri.queryParameters.get("symbols") ?? "")
            .split(separator: ",").map { Symbol.normalize(String($0)) }.filter { !$0.isEmpty }
        guard symbols.count <= 200 else { throw InvalidInput("At most 200 symbols per request.") }
        var seen = Set<String>()
        let market = try await leagueMarket(request, context)
        let unique = symbols.filter { seen.insert($0).inserted }.filter(Symbol.isValid).map { Symbol.stored($0, inLeague: market) }
        let found = try await quotes.quotes(for: unique)
        let names = try await store.names(for: Array(found.keys))
        return unique.compactMap { symbol in
            found[symbol].map { Quote(name: names[symbol] ?? Symbol.shown(symbol), quote: $0) }
        }
    }

    @Sendable func market(_ request: Request, context: AppRequestContext) async throws -> QuotePage {
        let parameters = request.uri.queryParameters
        let sortName = parameters.get("sort") ?? "symbol"
        guard let sort = MarketStore.Sort(rawValue: sortName) else {
            throw InvalidInput(
                "sort must be one of \(MarketStore.Sort.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let page = try Pagination(parameters, defaultLimit: 50)
        let search = parameters.get("search") ?? ""
        try TextInput.check(search, field: "search", length: 0...100, use: .privateToSender)
        let (items, total) = try await store.page(search: search, sort: sort, limit: page.limit, offset: page.offset)
        return QuotePage(items: items.map { Quote(name: $0.name, quote: $0.quote) }, total: total)
    }

    @Sendable func movers(_ request: Request, context: AppRequestContext) async throws -> Movers {
        let limit = try Pagination.limit(request.uri.queryParameters, default: 5, maximum: 50)
        let (winners, losers) = try await store.movers(limit: limit)
        return Movers(
            winners: winners.map { Quote(name: $0.name, quote: $0.quote) },
            losers: losers.map { Quote(name: $0.name, quote: $0.quote) }
        )
    }

    @Sendable func detail(_ request: Request, context: AppRequestContext) async throws -> StockDetail {
        let symbol = Symbol.stored(try Symbol.known(context), inLeague: try await leagueMarket(request, context))
        guard let info = try await store.instrument(symbol) else { throw MarketError.unknownSymbol(symbol) }
        let priceQuote = try await quotes.quote(for: symbol)
        let quote = Quote(name: info.name, quote: priceQuote)
        let price = priceQuote.price
        let (yearAgo, high, low) = try await store.yearStatistics(symbol, through: try await historyEnd(of: symbol))
        return StockDetail(
            quote: quote, description: info.description, sector: info.sector, currency: info.currency,
            yearChangePercent: yearAgo.map { ((price - $0) / $0 * 100).rounded(2).moneyString },
            yearHigh: high.map { max($0, price).moneyString },
            yearLow: low.map { min($0, price).moneyString }
        )
    }

    static let chartRanges = ["1m": 31, "3m": 92, "6m": 183, "1y": 366, "5y": 1827]

    @Sendable func chart(_ request: Request, context: AppRequestContext) async throws -> Chart {
        let symbol = Symbol.stored(try Symbol.known(context), inLeague: try await leagueMarket(request, context))
        let range = request.uri.queryParameters.get("range") ?? "1m"
        guard let days = Self.chartRanges[range] else {
            throw InvalidInput("range must be one of 1m, 3m, 6m, 1y, 5y.")
        }
        guard let adjusted = AdjustedHistory(rawValue: request.uri.queryParameters.get("adjusted") ?? "split") else {
            throw InvalidInput("adjusted must be one of split, total, none.")
        }
        guard try await store.instrument(symbol) != nil else { throw MarketError.unknownSymbol(symbol) }
        let points = try await store.bars(symbol, days: days, through: try await historyEnd(of: symbol), adjusted: adjusted)
        return Chart(symbol: Symbol.shown(symbol), range: range, adjusted: adjusted, points: points)
    }

    /// With `leagueId`, a scenario league of the caller's: its symbols name its own
    /// instruments (`Symbol.stored`). Nil without.
    private func leagueMarket(_ request: Request, _ context: AppRequestContext) async throws -> Int? {
        guard let leagueID = try request.positiveInteger("leagueId") else { return nil }
        guard let league = try await leagues.league(id: leagueID, member: try context.requireIdentity().userID) else {
            throw LeagueError.noSuchLeague
        }
        guard league.market != nil else { throw LeagueMarketError.noMarket }
        return leagueID
    }

    /// The last day of history players may see: a scenario league's instruments have bars
    /// only up to the league's day; others up to the replay's day when the server replays.
    private func historyEnd(of symbol: String) async throws -> String? {
        Symbol.isLeagues(symbol) ? nil : try await quotes.historyEnd()
    }
}

extension Symbol {
    /// The `{symbol}` path parameter, normalised; 404 `unknown_symbol` when it cannot be one.
    static func known(_ context: AppRequestContext) throws -> String {
        let symbol = normalize(context.parameters.get("symbol") ?? "")
        guard isValid(symbol) else { throw MarketError.unknownSymbol(symbol) }
        return symbol
    }
}
