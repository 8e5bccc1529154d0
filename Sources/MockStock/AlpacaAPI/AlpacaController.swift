import Foundation
import Hummingbird

/// The account, clock, calendar and assets of the Alpaca-compatible API (`/v2`), over the
/// same portfolios, rules and market as `/api`.
struct AlpacaController {
    let store: AlpacaStore
    let trading: TradingService
    let rules: TradingRulesBook
    let hours: MarketHours
    let history: ValueHistoryService
    let now: @Sendable () -> Date

    func addRoutes(to v2: RouterGroup<AppRequestContext>) {
        v2.get("account", use: account)
        v2.get("account/portfolio/history", use: portfolioHistory)
        v2.get("account/activities", use: activities)
        v2.get("account/activities/{activityType}", use: activities)
        v2.get("clock", use: clock)
        v2.get("calendar", use: calendar)
        v2.get("assets", use: assets)
        v2.get("assets/{symbolOrId}", use: asset)
    }

    @Sendable func account(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaAccount> {
        try Self.refuseParameters(request, except: [])
        let userID = try context.requireIdentity().userID
        if trading.fetchesQuotesOnDemand {
            // Brings the held symbols' prices up to date first (QUOTE_PROVIDER=http).
            _ = try await trading.portfolio(userID: userID, id: context.botPortfolioID)
        }
        guard let account = try await store.account(userID: userID, portfolioID: context.botPortfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let record = account.record
        let rules = try await rules.rules(userID: userID, portfolioID: context.botPortfolioID)
        let equity = account.netWorth.moneyString
        // A league that lends or keeps maintenance shows what the positions need, and a lending
        // one what the equity may still buy (one more query, for such accounts only); a cash
        // account shows 0, as before.
        let margins = rules.marginPercent == nil && rules.maintenancePercent == nil
            ? (initial: Decimal(0), maintenance: Decimal(0), buyingPower: nil) : try await store.marginNeeded(account, rules: rules)
        let buyingPower = max(account.buyingPower, margins.buyingPower ?? account.buyingPower).moneyString
        return AlpacaResponse(AlpacaAccount(
            id: record.uuid, accountNumber: String(format: "PA%010d", record.id), currency: account.currency,
            cash: account.cash.moneyString, buyingPower: buyingPower, regtBuyingPower: buyingPower,
            nonMarginableBuyingPower: max(account.buyingPower, 0).moneyString, portfolioValue: equity, equity: equity,
            lastEquity: (account.netWorth - account.dayChange).moneyString, longMarketValue: account.longValue.moneyString,
            shortMarketValue: account.shortValue.moneyString,
            initialMargin: margins.initial.rounded(2).moneyString, maintenanceMargin: margins.maintenance.rounded(2).moneyString,
            multiplier: "\(rules.multiplier.rounded(4))",
            tradingBlocked: !record.running, shortingEnabled: rules.allowShortSelling, createdAt: record.createdAt
        ))
    }

    /// Equity at the end of each trading day (`timeframe=1D`) from the value-history rule
    /// `/api/portfolios/{id}/history` uses; today at live prices. The range: `start`–`end`,
    /// or `period` (`<n>D|W|M|A`, default 1M) ending `date_end`/`end` (default today);
    /// `date_start` is `start`.
    /// Profit and loss leave out money paid in or taken out since the first day.
    @Sendable func portfolioHistory(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaPortfolioHistory> {
        try Self.refuseParameters(request, except: [
            "period", "timeframe", "date_start", "date_end", "start", "end", "extended_hours", "intraday_reporting", "pnl_reset",
        ])
        let parameters = request.uri.queryParameters
        if let timeframe = parameters.get("timeframe"), timeframe != "1D" {
            throw InvalidInput("timeframe must be 1D: the history is kept per trading day, not within the day.")
        }
        if let extended = parameters.get("extended_hours"), !["false", "False"].contains(extended) {
            throw InvalidInput("extended_hours is not supported: values are taken at each day's close.")
        }
        if let reporting = parameters.get("intraday_reporting"), reporting != "market_hours" {
            throw InvalidInput("intraday_reporting must be market_hours: there are no intraday values.")
        }
        if let reset = parameters.get("pnl_reset"), !["per_day", "no_reset"].contains(reset) {
            throw InvalidInput("pnl_reset must be per_day or no_reset.")
        }
        let end = try parameters.get("date_end").map {
            guard CalendarDay.isValid($0) else { throw InvalidInput("date_end must be a day, YYYY-MM-DD.") }
            return $0
        } ?? parameters.get("end").map { try AlpacaMarketDataController.day($0, "end", roundingUp: false) }
            ?? history.dayString(now())
        // alpaca-trade-api names the start `date_start`, as the end `date_end`.
        let start = try (parameters.get("date_start") ?? parameters.get("start")).map { try AlpacaMarketDataController.day($0, "start", roundingUp: true) }
            ?? Self.day(end, before: parameters.get("period") ?? "1M", in: history)
        let values = try await history.values(
            userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID, from: start, to: end, interval: .day
        ).values
        return AlpacaResponse(AlpacaPortfolioHistory(values))
    }

    /// The day `period` (`<n>D`, `W`, `M` or `A`: days, weeks, months, years) before `end`.
    private static func day(_ end: String, before period: String, in history: ValueHistoryService) throws -> String {
        let unit = period.last.map(String.init) ?? ""
        guard period.count <= 5, let count = Int(period.dropLast()), count > 0, let last = history.date(end) else {
            throw InvalidInput("period must be a number and a unit: 5D, 2W, 3M or 1A.")
        }
        let component: Calendar.Component
        switch unit {
        case "D": component = .day
        case "W": component = .weekOfYear
        case "M": component = .month
        case "A": component = .year
        default: throw InvalidInput("period must be a number and a unit: 5D, 2W, 3M or 1A.")
        }
        guard let first = Calendar(identifier: .gregorian).date(byAdding: component, value: -count, to: last) else {
            throw InvalidInput("period reaches too far back.")
        }
        return history.dayString(first)
    }

    /// Fills, dividends, cash in lieu, deposits, withdrawals, rewards and splits, newest
    /// first unless `direction=asc`; `page_token` is the last activity's id.
    @Sendable func activities(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaActivity]> {
        try Self.refuseParameters(request, except: ["activity_types", "date", "after", "until", "direction", "page_size", "page_token"])
        let parameters = request.uri.queryParameters
        let named = (context.parameters.get("activityType").map { [$0] } ?? parameters.get("activity_types")?.split(separator: ",").map(String.init))
        let kinds = try named.map { names in
            try names.flatMap { name in
                guard let kinds = AlpacaActivity.types[name] else {
                    throw InvalidInput("activity type \(name.prefix(20)) is not kept here; kept: \(AlpacaActivity.types.keys.sorted().joined(separator: ", ")).")
                }
                return kinds
            }
        }
        var after = try AlpacaOrdersController.moment(parameters.get("after"), "after")
        var until = try AlpacaOrdersController.moment(parameters.get("until"), "until")
        if let date = parameters.get("date") {
            guard CalendarDay.isValid(date), let start = try AlpacaOrdersController.moment(date, "date") else {
                throw InvalidInput("date must be a date, YYYY-MM-DD.")
            }
            (after, until) = (start.addingTimeInterval(-0.000_001), start.addingTimeInterval(86_400))
        }
        let direction = parameters.get("direction") ?? "desc"
        guard ["asc", "desc"].contains(direction) else { throw InvalidInput("direction must be asc or desc.") }
        let size = try parameters.get("page_size").map {
            guard let size = Int($0), (1...100).contains(size) else { throw InvalidInput("page_size must be from 1 to 100.") }
            return size
        } ?? 100
        let cursor = try parameters.get("page_token").map(TradingService.activityCursor)
        let userID = try context.requireIdentity().userID
        guard let account = try await store.record(userID: userID, portfolioID: context.botPortfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let records = try await store.activities(
            portfolioID: account.id, types: kinds, after: after, until: until, ascending: direction == "asc", cursor: cursor, limit: size
        )
        return AlpacaResponse(records.map { AlpacaActivity($0, accountID: account.uuid) })
    }

    @Sendable func clock(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaClock> {
        try Self.refuseParameters(request, except: [])
        let clock = hours.clock(at: now())
        return AlpacaResponse(AlpacaClock(timestamp: clock.timestamp, isOpen: clock.isOpen, nextOpen: clock.nextOpen, nextClose: clock.nextClose))
    }

    /// Trading days from `start` to `end` (dates; default today and a month on), at most
    /// three years of them.
    @Sendable func calendar(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaCalendarDay]> {
        try Self.refuseParameters(request, except: ["start", "end", "date_type"])
        let parameters = request.uri.queryParameters
        if let type = parameters.get("date_type"), type != "TRADING" {
            throw InvalidInput("date_type must be TRADING: settlement dates are the trading days here.")
        }
        var days = Calendar(identifier: .gregorian)
        days.timeZone = hours.timeZone
        let today = days.startOfDay(for: now())
        let start = try parameters.get("start").map { try Self.day($0, "start", in: days) } ?? today
        let end = try parameters.get("end").map { try Self.day($0, "end", in: days) } ?? days.date(byAdding: .month, value: 1, to: start)!
        guard start <= end, end.timeIntervalSince(start) <= 3 * 366 * 86_400 else {
            throw InvalidInput("end must not be before start, and at most three years after it.")
        }
        let time = DateFormatter()
        time.locale = Locale(identifier: "en_US_POSIX")
        time.timeZone = hours.timeZone
        let date = DateFormatter()
        date.locale = time.locale
        date.timeZone = hours.timeZone
        date.dateFormat = "yyyy-MM-dd"
        time.dateFormat = "HH:mm"
        let result = hours.sessions(from: start, through: end).map { session in
            let day = date.string(from: session.open)
            // A session that ends at midnight (MARKET_HOURS=always) closes at 23:59 on its own day.
            let closesOnItsDay = date.string(from: session.close) == day
            let close = closesOnItsDay ? time.string(from: session.close) : "23:59"
            return AlpacaCalendarDay(
                date: day, open: time.string(from: session.open), close: close,
                sessionOpen: time.string(from: session.open).replacingOccurrences(of: ":", with: ""),
                sessionClose: close.replacingOccurrences(of: ":", with: ""), settlementDate: day
            )
        }
        return AlpacaResponse(result)
    }

    @Sendable func assets(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<[AlpacaAsset]> {
        try Self.refuseParameters(request, except: ["status", "asset_class", "exchange"])
        let parameters = request.uri.queryParameters
        let active: Bool? = switch parameters.get("status") {
        case nil: nil
        case "active": true
        case "inactive": false
        default: throw InvalidInput("status must be active or inactive.")
        }
        // Every instrument is a US equity on the one exchange of the game.
        if let assetClass = parameters.get("asset_class"), assetClass != "us_equity" { return AlpacaResponse([]) }
        if let exchange = parameters.get("exchange"), exchange != "NYSE" { return AlpacaResponse([]) }
        let rules = try await rules.rules(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID)
        return AlpacaResponse(try await store.assets(active: active, league: rules.market).map { Self.asset($0, rules: rules) })
    }

    @Sendable func asset(_ request: Request, context: AppRequestContext) async throws -> AlpacaResponse<AlpacaAsset> {
        try Self.refuseParameters(request, except: [])
        let key = context.parameters.get("symbolOrId") ?? ""
        let rules = try await rules.rules(userID: context.requireIdentity().userID, portfolioID: context.botPortfolioID)
        guard key.count <= 36, !Symbol.isLeagues(key), let record = try await store.asset(symbolOrID: key, league: rules.market) else {
            throw AppError.notFound("asset not found: \(key.prefix(36))")
        }
        return AlpacaResponse(Self.asset(record, rules: rules))
    }

    private static func asset(_ record: AlpacaStore.AssetRecord, rules: TradingRules) -> AlpacaAsset {
        let allowed = record.active && (rules.allowedSymbols?.contains(record.symbol) ?? true)
        return AlpacaAsset(
            id: record.uuid, symbol: Symbol.shown(record.symbol), name: record.name, status: record.active ? "active" : "inactive",
            tradable: allowed, marginable: false, shortable: allowed && rules.allowShortSelling,
            easyToBorrow: allowed && rules.allowShortSelling
        )
    }

    // MARK: Parameters

    /// Alpaca parameters this server does not support are refused, never ignored.
    static func refuseParameters(_ request: Request, except supported: Set<String>) throws {
        if let unsupported = request.uri.queryParameters.map({ String($0.key) }).sorted().first(where: { !supported.contains($0) }) {
            throw InvalidInput(
                "The parameter \(unsupported.prefix(40)) is not supported here"
                    + (supported.isEmpty ? "." : "; this endpoint takes \(supported.sorted().joined(separator: ", ")).")
            )
        }
    }

    /// A day: a date, or (as alpaca-trade-api sends it) a time, taken as its day in the
    /// market's calendar.
    private static func day(_ text: String, _ name: String, in calendar: Calendar) throws -> Date {
        if !CalendarDay.isValid(text), text.count > 10, let moment = try? AlpacaOrdersController.moment(text, name) {
            return calendar.startOfDay(for: moment)
        }
        guard CalendarDay.isValid(text) else { throw InvalidInput("\(name) must be a date, YYYY-MM-DD, or a time.") }
        let parts = text.split(separator: "-").compactMap { Int($0) }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))!
    }
}
