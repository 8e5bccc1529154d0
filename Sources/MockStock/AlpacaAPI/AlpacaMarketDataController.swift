import Foundation
import Hummingbird

/// Market data v2 (`/v2/stocks/...`) from the stored prices: daily bars (weeks and months
/// built from them), adjusted as asked; minute and hour bars from the minute bars every
/// stored price change keeps; the current price as the latest quote and trade. Every parameter alpaca-py's `StockHistoricalDataClient` sends is understood or
/// refused. Each route has Alpaca's single-symbol form too (`/v2/stocks/{symbol}/bars`,
/// `…/bars/latest`, `…/quotes/latest`, `…/trades/latest`, `…/snapshot`), answered by
/// the same code for one symbol in Alpaca's single-symbol shapes.
struct AlpacaMarketDataController {
    let store: AlpacaStore
    let quotes: any QuoteProvider
    let clock: MarketClock
    /// Which market a key's portfolio trades in: a scenario league's own (`TradingRules.market`).
    let rules: TradingRulesBook

    func addRoutes(to v2: RouterGroup<AppRequestContext>) {
        v2.get("stocks/bars", use: bars)
        v2.get("stocks/bars/latest", use: latestBars)
        v2.get("stocks/quotes/latest", use: latestQuotes)
        v2.get("stocks/trades/latest", use: latestTrades)
        v2.get("stocks/snapshots", use: snapshots)
        v2.get("stocks/:symbol/bars", use: symbolBars)
        v2.get("stocks/:symbol/bars/latest", use: symbolLatestBar)
        v2.get("stocks/:symbol/quotes/latest", use: symbolLatestQuote)
        v2.get("stocks/:symbol/trades/latest", use: symbolLatestTrade)
        v2.get("stocks/:symbol/snapshot", use: symbolSnapshot)
    }

    static let maxSymbols = 100

    static let barParameters: Set<String> = ["timeframe", "start", "end", "limit", "page_token", "adjustment", "feed", "sort"]

    @Sendable func bars(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaBars> {
        try AlpacaController.refuseParameters(request, except: Self.barParameters.union(["symbols"]))
        let market = try await leagueMarket(context)
        let symbols = try Self.symbols(request.uri.queryParameters.get("symbols")).map { Symbol.stored($0, inLeague: market) }
        let (records, next) = try await barPage(symbols, request, market: market)
        var bars: [String: [AlpacaBar]] = [:]
        for record in records { bars[Symbol.shown(record.symbol), default: []].append(AlpacaBar(record)) }
        return AlpacaResponse(AlpacaBars(bars: bars, nextPageToken: next))
    }

    @Sendable func symbolBars(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaSymbolBars> {
        try AlpacaController.refuseParameters(request, except: Self.barParameters)
        let symbol = try Self.symbol(context)
        let market = try await leagueMarket(context)
        let (records, next) = try await barPage([Symbol.stored(symbol, inLeague: market)], request, market: market)
        return AlpacaResponse(AlpacaSymbolBars(bars: records.map(AlpacaBar.init), symbol: symbol, nextPageToken: next))
    }

    /// The scenario league whose market the request's key trades in (nil: the real market's,
    /// and a bearer token's personal portfolio): its symbols are that league's instruments,
    /// shown without their suffix, and its bars are dated by the league's calendar.
    private func leagueMarket(_ context: AppRequestContext) async throws -> Int? {
        guard let portfolioID = context.botPortfolioID else { return nil }
        return try await rules.rules(userID: try context.requireIdentity().userID, portfolioID: portfolioID).market
    }

    /// Keyed by the symbols as shown.
    private static func shown<T>(_ values: [String: T]) -> [String: T] {
        Dictionary(values.map { (Symbol.shown($0.key), $0.value) }) { first, _ in first }
    }

    /// One page of bars of these symbols, by symbol then time, and the next page's token.
    /// In a scenario league's market, the bars up to its day whatever the date.
    private func barPage(
        _ symbols: [String], _ request: Request, market: Int?
    ) async throws -> (records: ArraySlice<AlpacaStore.BarRecord>, next: String?) {
        let parameters = request.uri.queryParameters
        let timeframe = try Self.timeframe(parameters.get("timeframe"))
        let adjusted: AdjustedHistory = switch parameters.get("adjustment") ?? "raw" {
        case "raw": .none
        case "split": .split
        case "all": .total
        default: throw InvalidInput("adjustment must be raw, split or all (dividends alone are not offered).")
        }
        try Self.checkFeed(parameters.get("feed"))
        if let sort = parameters.get("sort"), sort != "asc" { throw InvalidInput("sort must be asc.") }
        let limit = try parameters.get("limit").map {
            guard let limit = Int($0), (1...10_000).contains(limit) else { throw InvalidInput("limit must be from 1 to 10000.") }
            return limit
        } ?? 1000
        let token = try parameters.get("page_token").map(Self.position(in:))
        let records: [AlpacaStore.BarRecord]
        switch timeframe {
        case .intraday(let seconds):
            // Minute bars are as traded: no split or dividend falls within the seven days kept.
            let end = try parameters.get("end").map { try Self.instant($0, "end") } ?? clock.now()
            let start = try parameters.get("start").map { try Self.instant($0, "start") }
                ?? Calendar(identifier: .gregorian).startOfDay(for: end)
            guard start <= end else { throw InvalidInput("start must not be after end.") }
            records = try await store.intradayBars(
                symbols: symbols, from: start, to: end, seconds: seconds,
                after: try token.map { token in
                    guard let epoch = Int(token.position) else { throw Self.invalidToken }
                    return (Symbol.stored(token.symbol, inLeague: market), epoch)
                }, limit: limit + 1
            )
        case .period(let period):
            let end = try parameters.get("end").map { try Self.day($0, "end", roundingUp: false) }
                ?? (market == nil ? clock.today() : Self.lastDay)
            let start = try parameters.get("start").map { try Self.day($0, "start", roundingUp: true) } ?? clock.day(
                of: Calendar(identifier: .gregorian).date(byAdding: .day, value: -30, to: clock.now())!
            )
            guard start <= end else { throw InvalidInput("start must not be after end.") }
            records = try await store.bars(
                symbols: symbols, from: start, to: end, through: market == nil ? try await quotes.historyEnd() : nil, adjusted: adjusted,
                period: period, after: try token.map { token in
                    guard CalendarDay.isValid(token.position) else { throw Self.invalidToken }
                    return (Symbol.stored(token.symbol, inLeague: market), token.position)
                }, limit: limit + 1
            )
        }
        let next = records.count > limit ? records[limit - 1] : nil
        return (records.prefix(limit), next.map { Self.token(Symbol.shown($0.symbol), $0.day) })
    }

    /// The end of a scenario league's bars when none is asked: they run ahead of the
    /// calendar in a league whose days pass faster than the market's.
    static let lastDay = "9999-12-31"

    static let latestParameters: Set<String> = ["feed"]

    @Sendable func latestBars(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaLatestBars> {
        let market = try await leagueMarket(context)
        let symbols = try Self.symbols(request, context).map { Symbol.stored($0, inLeague: market) }
        return AlpacaResponse(AlpacaLatestBars(bars: Self.shown(try await latestBars(symbols))))
    }

    @Sendable func symbolLatestBar(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaSymbolLatestBar> {
        let symbol = try Self.symbol(request, context)
        let stored = Symbol.stored(symbol, inLeague: try await leagueMarket(context))
        guard let bar = try await latestBars([stored])[stored] else { throw Self.noData(symbol) }
        return AlpacaResponse(AlpacaSymbolLatestBar(symbol: symbol, bar: bar))
    }

    private func latestBars(_ symbols: [String]) async throws -> [String: AlpacaBar] {
        let records = try await store.latestBars(symbols: symbols, through: try await historyEnd(symbols))
        return Dictionary(records.map { ($0.symbol, AlpacaBar($0)) }) { first, _ in first }
    }

    @Sendable func latestQuotes(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaLatestQuotes> {
        let market = try await leagueMarket(context)
        let prices = try await quotes.quotes(for: try Self.symbols(request, context).map { Symbol.stored($0, inLeague: market) })
        return AlpacaResponse(AlpacaLatestQuotes(quotes: Self.shown(prices.mapValues(AlpacaQuote.init))))
    }

    @Sendable func symbolLatestQuote(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaSymbolLatestQuote> {
        let symbol = try Self.symbol(request, context)
        let stored = Symbol.stored(symbol, inLeague: try await leagueMarket(context))
        guard let price = try await quotes.quotes(for: [stored])[stored] else { throw Self.noData(symbol) }
        return AlpacaResponse(AlpacaSymbolLatestQuote(symbol: symbol, quote: AlpacaQuote(price)))
    }

    @Sendable func latestTrades(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaLatestTrades> {
        let market = try await leagueMarket(context)
        let prices = try await quotes.quotes(for: try Self.symbols(request, context).map { Symbol.stored($0, inLeague: market) })
        return AlpacaResponse(AlpacaLatestTrades(trades: Self.shown(prices.mapValues(AlpacaTrade.init))))
    }

    @Sendable func symbolLatestTrade(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaSymbolLatestTrade> {
        let symbol = try Self.symbol(request, context)
        let stored = Symbol.stored(symbol, inLeague: try await leagueMarket(context))
        guard let price = try await quotes.quotes(for: [stored])[stored] else { throw Self.noData(symbol) }
        return AlpacaResponse(AlpacaSymbolLatestTrade(symbol: symbol, trade: AlpacaTrade(price)))
    }

    @Sendable func snapshots(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[String: AlpacaSnapshot]> {
        let market = try await leagueMarket(context)
        let symbols = try Self.symbols(request, context).map { Symbol.stored($0, inLeague: market) }
        return AlpacaResponse(Self.shown(try await snapshots(symbols)), snakeCase: false)
    }

    /// Alpaca's single snapshot names its symbol beside the five parts.
    @Sendable func symbolSnapshot(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaSnapshot> {
        let symbol = try Self.symbol(request, context)
        let stored = Symbol.stored(symbol, inLeague: try await leagueMarket(context))
        guard var snapshot = try await snapshots([stored])[stored] else { throw Self.noData(symbol) }
        snapshot.symbol = symbol
        return AlpacaResponse(snapshot, snakeCase: false)
    }

    private func snapshots(_ symbols: [String]) async throws -> [String: AlpacaSnapshot] {
        let prices = try await quotes.quotes(for: symbols)
        let bars = Dictionary(grouping: try await store.latestBars(symbols: symbols, through: try await historyEnd(symbols), count: 2), by: \.symbol)
        let minutes = Dictionary(try await store.latestMinuteBars(symbols: symbols).map { ($0.symbol, $0) }) { first, _ in first }
        var snapshots: [String: AlpacaSnapshot] = [:]
        for symbol in symbols where prices[symbol] != nil || bars[symbol] != nil {
            let price = prices[symbol]
            let days = bars[symbol] ?? []
            snapshots[symbol] = AlpacaSnapshot(
                latestTrade: price.map(AlpacaTrade.init), latestQuote: price.map(AlpacaQuote.init),
                minuteBar: minutes[symbol].map(AlpacaBar.init), dailyBar: days.first.map(AlpacaBar.init), prevDailyBar: days.dropFirst().first.map(AlpacaBar.init)
            )
        }
        return snapshots
    }

    /// The last day of history a bot may see: the replay's day when the server replays, but
    /// none for a scenario league's instruments (their bars stop at the league's day).
    private func historyEnd(_ symbols: [String]) async throws -> String? {
        symbols.contains(where: Symbol.isLeagues) ? nil : try await quotes.historyEnd()
    }

    /// A symbol with no price and no stored day: Alpaca answers 404 on its single-symbol routes.
    static func noData(_ symbol: String) -> AppError {
        .notFound("No market data for \(symbol).")
    }

    // MARK: Parameters

    /// The symbols of a several-symbol latest-data route (`symbols` and `feed` only).
    static func symbols(_ request: Request, _ context: AppRequestContext) throws -> [String] {
        try AlpacaController.refuseParameters(request, except: latestParameters.union(["symbols"]))
        try checkFeed(request.uri.queryParameters.get("feed"))
        return try symbols(request.uri.queryParameters.get("symbols"))
    }

    /// The symbol of a single-symbol latest-data route (`feed` only).
    static func symbol(_ request: Request, _ context: AppRequestContext) throws -> String {
        try AlpacaController.refuseParameters(request, except: latestParameters)
        try checkFeed(request.uri.queryParameters.get("feed"))
        return try symbol(context)
    }

    /// The `{symbol}` of a single-symbol route.
    static func symbol(_ context: AppRequestContext) throws -> String {
        let symbol = Symbol.normalize(context.parameters.get("symbol") ?? "")
        guard Symbol.isValid(symbol) else { throw InvalidInput("The path must name a valid symbol, such as AAPL.") }
        return symbol
    }

    static func symbols(_ text: String?) throws -> [String] {
        guard let text, !text.isEmpty else { throw InvalidInput("symbols is required: a comma-separated list.") }
        let symbols = Array(Set(text.split(separator: ",").map { Symbol.normalize(String($0)) })).sorted()
        guard symbols.count <= maxSymbols, symbols.allSatisfy(Symbol.isValid) else {
            throw InvalidInput("symbols must be at most \(maxSymbols) valid symbols, comma-separated.")
        }
        return symbols
    }

    /// Every feed is served from the same stored prices.
    static func checkFeed(_ feed: String?) throws {
        if let feed, !["iex", "sip", "delayed_sip", "otc", "boats", "overnight"].contains(feed) {
            throw InvalidInput("feed must be one of Alpaca's feeds (iex, sip, ...): all are served from the same prices here.")
        }
    }

    /// The day a date names, or for a time the first (`roundingUp`) or last day whose bar
    /// is at or after, or at or before, it: Alpaca stamps a daily bar at New York's
    /// midnight, whatever the server's `MARKET_HOURS`.
    static func day(_ text: String, _ name: String, roundingUp: Bool) throws -> String {
        if CalendarDay.isValid(text) { return text }
        guard let moment = try AlpacaOrdersController.moment(text, name) else { throw InvalidInput("\(name) is empty.") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = barStamps.timeZone
        let midnight = calendar.startOfDay(for: moment)
        guard roundingUp, midnight < moment else { return barStamps.day(of: midnight) }
        return barStamps.day(of: calendar.date(byAdding: .day, value: 1, to: midnight)!)
    }

    /// The calendar of Alpaca's bar stamps (New York's).
    static let barStamps = MarketHours(schedule: .nyse)

    /// A page token: the last bar's symbol and day (or, for intraday bars, epoch second).
    static func token(_ symbol: String, _ position: String) -> String {
        Data("\(symbol)|\(position)".utf8).base64EncodedString()
    }

    static let invalidToken = InvalidInput("page_token is not one this server gave.")

    static func position(in token: String) throws -> (symbol: String, position: String) {
        guard token.count <= 64, let data = Data(base64Encoded: token), let text = String(data: data, encoding: .utf8) else {
            throw invalidToken
        }
        let parts = text.split(separator: "|").map(String.init)
        guard parts.count == 2, Symbol.isValid(parts[0]), parts[1].count <= 12 else { throw invalidToken }
        return (parts[0], parts[1])
    }

    /// Bars per day, week or month (from the daily prices), or per so many seconds (from
    /// the minute bars): `1Day`, `1Week`, `1Month`, `<1–59>Min`, `<1–23>Hour` (and `T`/`H`).
    enum Timeframe: Equatable {
        case period(String)
        case intraday(seconds: Int)
    }

    static func timeframe(_ text: String?) throws -> Timeframe {
        guard let text else { throw InvalidInput("timeframe is required: 1Day, 1Week, 1Month, <n>Min or <n>Hour.") }
        switch text {
        case "1Day", "1D": return .period("day")
        case "1Week", "1W": return .period("week")
        case "1Month", "1M": return .period("month")
        default: break
        }
        for (suffix, unit, most) in [("Min", 60, 59), ("T", 60, 59), ("Hour", 3600, 23), ("H", 3600, 23)] where text.hasSuffix(suffix) {
            if let count = Int(text.dropLast(suffix.count)), (1...most).contains(count) { return .intraday(seconds: count * unit) }
        }
        throw InvalidInput("timeframe must be 1Day, 1Week, 1Month, 1–59Min or 1–23Hour.")
    }

    /// A moment: an RFC 3339 time, or a day (its midnight, UTC).
    static func instant(_ text: String, _ name: String) throws -> Date {
        guard let moment = try AlpacaOrdersController.moment(text, name) else { throw InvalidInput("\(name) is empty.") }
        return moment
    }
}
