import Foundation
import Postgres

/// The rules a portfolio trades under: its league's for a league portfolio, the server's
/// (`TRADE_FEE` as the flat commission, everything allowed, no shorts) for a personal one.
struct TradingRules: Sendable, Equatable {
    var commission: Commission
    var allowShortSelling = false
    /// How much of a short position's market value the portfolio's equity must cover.
    var shortMarginPercent: Decimal = 150
    /// The most one symbol may be of the portfolio's net worth after a buy.
    var maxPositionPercent: Decimal = 100
    var allowedOrderTypes: Set<OrderType> = Set(OrderType.allCases)
    /// nil: every symbol.
    var allowedSymbols: Set<String>?
    /// The currency the portfolio's cash is held in (a league's); stocks trade in dollars.
    var currency = FxCurrency.dollar
    /// What a fill in another currency pays over (a buy) or gets under (a sale) the rate
    /// now, in percent.
    var fxSpreadPercent: Decimal = 0
    /// Realistic fills (`FillPricing`): the last price itself, or a quote around it.
    var fillPrice = FillPriceRule.last
    /// With `fillPrice` `.quote`: the spread between the bid and the ask, in basis points
    /// of the last price (half of it on each side).
    var spreadBps: Decimal = 10
    /// How far a fill's size moves its price: coefficient × (shares / V)² × the last
    /// price, V being the symbol's volume on the previous trading day.
    var impactCoefficient: Decimal = 0
    /// In one market day a portfolio's fills in a symbol total at most this % of V (at
    /// least a share; `volumeCap`); nil: no cap.
    var volumeCapPercent: Decimal?
    /// Buying a stock whose last price is below this is refused (`price_too_low`).
    var minPrice: Decimal = 0
    /// Selling short a stock whose last price is below this is refused.
    var minShortPrice: Decimal = 0

    /// Buying on margin: nil, cash only; else a buy may borrow (cash may go negative) while,
    /// after it, long value × marginPercent % + short value × shortMarginPercent % ≤ equity.
    var marginPercent: Decimal?
    /// At each market day's close, equity below this % of long + short value is a margin
    /// call, and still below at the next close, forced sales (`MarginCloses`); nil: never.
    var maintenancePercent: Decimal?
    /// Yearly rates charged at each market day's close, rate/360 a calendar day: negative
    /// cash pays `debitRatePercent`, positive cash earns `creditRatePercent`, and each short
    /// pays `borrowFeePercent` of its value.
    var debitRatePercent: Decimal = 0
    var creditRatePercent: Decimal = 0
    var borrowFeePercent: Decimal = 0
    /// A scenario league's own market: the league whose instruments its portfolios trade
    /// (`Symbol.stored`); nil, the real market.
    var market: Int?

    /// The stored symbol a client's `symbol` names under these rules: in a scenario
    /// league, that league's instrument. A symbol with '@' names nothing a client may
    /// trade (only the server writes scenario leagues' stored symbols).
    func instrument(_ symbol: String) throws -> String {
        guard !Symbol.isLeagues(symbol) else { throw MarketError.unknownSymbol(symbol) }
        return Symbol.stored(symbol, inLeague: market)
    }

    /// Whether pricing a fill needs the symbol's volume on the previous trading day.
    var usesVolume: Bool { impactCoefficient > 0 || volumeCapPercent != nil }

    /// The most shares a portfolio's fills in a symbol may total in one market day:
    /// ⌊volumeCapPercent % × V⌋, at least 1; nil without a cap or a known V.
    func volumeCap(volume: Int?) -> Int? {
        guard let volumeCapPercent, let volume, volume > 0 else { return nil }
        let cap = (volumeCapPercent * Decimal(volume) / 100).rounded(0, .down)
        return max(1, NSDecimalNumber(decimal: cap).intValue)
    }

    /// The margin a fill checks short sales against, or nil where shorts are not allowed
    /// (the fill statement then never lets a quantity go below zero).
    var shortSellingMargin: Decimal? {
        allowShortSelling ? shortMarginPercent : nil
    }

    /// Refuses an order type or a symbol the rules leave out.
    func check(type: OrderType, symbol: String) throws {
        guard allowedOrderTypes.contains(type) else { throw TradingError.orderTypeNotAllowed(type) }
        if let allowedSymbols, !allowedSymbols.contains(symbol) { throw TradingError.symbolNotAllowed(symbol) }
    }

    /// Whether a buy that makes the position worth `position` keeps within the limit of a
    /// portfolio worth `netWorth`.
    func allowsPosition(_ position: Decimal, netWorth: Decimal) -> Bool {
        maxPositionPercent >= 100 || position * 100 <= maxPositionPercent * netWorth
    }

    /// An order to fill under these rules at `price` (in the portfolio's currency; `fxRate`
    /// the rate that made it so): its fee is the commission on its amount, and it may go
    /// short where the rules allow.
    func order(userID: Int, portfolioID: Int?, symbol: String, quantity: Int, price: Decimal, fxRate: Decimal? = nil,
               pricing: FillPricing? = nil, source: TradeSource = .trade, fill: OrderToFill = .marketTrade,
               idempotency: (key: String, requestHash: String)? = nil, note: String? = nil,
               journalExempt: Bool = false, byKey: Bool = false, shortingRefused: Bool = false) -> TradeOrder {
        TradeOrder(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: price,
                   fee: commission.fee(for: price * Decimal(quantity)), fill: fill, shortMarginPercent: shortSellingMargin,
                   idempotency: idempotency, fxRate: fxRate, note: note, journalExempt: journalExempt, byKey: byKey,
                   spread: pricing?.spread ?? 0, impact: pricing?.impact ?? 0, source: source, shortingRefused: shortingRefused,
                   marginPercent: marginPercent)
    }

    /// A `side` fill of `quantity` shares quoted at `quote` dollars, priced under these
    /// rules (`pricing`, then `localPrice`, and the commission on the amount): the one
    /// pricing step of every fill made at a quote — an immediate trade, a market order, a
    /// resting order the matcher fills — and of the most a resting order may cost, which
    /// it reserves. The fill statement (`TradeStatement`) takes the price it gives as its
    /// input. (A back-dated fill is priced at a past day's close instead: `order`.)
    ///
    /// `limit`: a limit price the fill's dollar price may not pass; nil is returned when
    /// the rules' price does (a limit order the last price crossed but the quote has not).
    /// `volumes` is asked only where the rules need the previous day's volume.
    ///
    /// Under a volume cap (`volumeCap`) a fill may take what the portfolio has not yet
    /// filled of the symbol today: a resting order fills that much of its `quantity` (the
    /// rest waits; nil when nothing is left today), any other fill beyond it is refused
    /// (`TradingError.volumeCap`). The fill statement counts it against the cap again
    /// (`volume_fills`), so fills at once never pass it together. `capped` false prices the
    /// whole quantity without asking (what a resting order reserves).
    func fill(
        _ side: TradeSide, quote: Decimal, quotes: any QuoteProvider, volumes: DailyVolumes, userID: Int, portfolioID: Int?,
        symbol: String, quantity: Int, limit: Decimal? = nil, source: TradeSource = .trade, fill: OrderToFill = .marketTrade,
        idempotency: (key: String, requestHash: String)? = nil, note: String? = nil, journalExempt: Bool = false,
        byKey: Bool = false, capped: Bool = true
    ) async throws -> TradeOrder? {
        // A forced sale or cover of a margin call is made whatever the price.
        if source != .liquidation { try checkMinimum(side, last: quote) }
        let volume = usesVolume ? try await volumes.previousDay(symbol) : nil
        let remaining = quantity
        var quantity = quantity
        var counted: TradeOrder.VolumeCap?
        if capped, let cap = volumeCap(volume: volume), let portfolioID, source != .liquidation {
            let day = try await volumes.marketDay(for: symbol)
            let available = max(cap - (try await volumes.filled(portfolioID: portfolioID, symbol: symbol, day: day)), 0)
            if case .resting = fill {
                guard available > 0 else { return nil }
                quantity = min(quantity, available)
            } else if quantity > available {
                throw TradingError.volumeCap(available: available)
            }
            counted = TradeOrder.VolumeCap(shares: cap, day: day)
        }
        let dollars = pricing(side, last: quote, quantity: quantity, volume: volume)
        if let limit, side == .buy ? dollars.price > limit : dollars.price < limit { return nil }
        var order = try await priced(dollars, quotes: quotes, userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity,
                                     source: source, fill: fill, idempotency: idempotency, note: note, journalExempt: journalExempt,
                                     byKey: byKey)
        order.volumeCap = counted
        order.partial = quantity < remaining
        return order
    }

    /// The order of a fill priced at `dollars`, in the portfolio's currency
    /// (`localPricing`), with the commission on its amount. A sale below `minShortPrice`
    /// may not go short.
    func priced(
        _ dollars: FillPricing, quotes: any QuoteProvider, userID: Int, portfolioID: Int?, symbol: String, quantity: Int,
        source: TradeSource = .trade, fill: OrderToFill = .marketTrade, idempotency: (key: String, requestHash: String)? = nil,
        note: String? = nil, journalExempt: Bool = false, byKey: Bool = false
    ) async throws -> TradeOrder {
        let local = try await localPricing(dollars, quotes: quotes)
        return order(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: local.pricing.price,
                     fxRate: local.fxRate, pricing: local.pricing, source: source, fill: fill, idempotency: idempotency,
                     note: note, journalExempt: journalExempt, byKey: byKey,
                     shortingRefused: dollars.side == .sell && allowShortSelling && dollars.quote < minShortPrice)
    }

    /// Alpaca's account multiplier: how many dollars of stock a dollar of equity buys.
    var multiplier: Decimal { marginPercent.map { 100 / $0 } ?? 1 }

    /// Refuses a buy of a stock whose last price is below `minPrice` (`price_too_low`).
    func checkMinimum(_ side: TradeSide, last: Decimal) throws {
        if side == .buy, last < minPrice { throw TradingError.priceTooLow(shorting: false) }
    }

    /// A fill's price in dollars under these rules, from the last price: the last price
    /// itself (`fillPrice` last), or with `fillPrice` quote the ask for a buy — last ×
    /// (1 + spreadBps/20000) rounded up to the cent — and the bid for a sale — last ×
    /// (1 − spreadBps/20000) rounded down; then the impact of `quantity` shares against
    /// the order, impactCoefficient × (quantity / volume)² × last rounded to the cent
    /// (none without a known volume; a sale's price stays at least a cent).
    func pricing(_ side: TradeSide, last: Decimal, quantity: Int, volume: Int?) -> FillPricing {
        var spread: Decimal = 0
        if fillPrice == .quote {
            let half = last * spreadBps / 20_000
            spread = side == .buy ? (last + half).rounded(2, .up) - last : last - (last - half).rounded(2, .down)
        }
        var impact: Decimal = 0
        if impactCoefficient > 0, let volume, volume > 0 {
            let share = Decimal(quantity) / Decimal(volume)
            impact = (impactCoefficient * share * share * last).rounded(2)
            if side == .sell { impact = max(min(impact, last - spread - Decimal(string: "0.01")!), 0) }
        }
        return FillPricing(side: side, quote: last, spread: spread, impact: impact)
    }

    /// A fill's dollar pricing in the portfolio's currency: itself where that is dollars;
    /// else at the rate now plus the FX spread for a buy, minus it for a sale (the rate to
    /// six decimals, each price to four), with the rate it applied: the quote and the
    /// price converted, the spread the converted quote-plus-spread less the converted
    /// quote, the impact the rest. `FxError.noRate` when the currency has none now.
    private func localPricing(_ dollars: FillPricing, quotes: any QuoteProvider) async throws -> (pricing: FillPricing, fxRate: Decimal?) {
        guard currency != FxCurrency.dollar else { return (dollars, nil) }
        guard let now = try await quotes.fxRate(from: FxCurrency.dollar, to: currency) else {
            throw FxError.noRate(FxCurrency.dollar, currency)
        }
        let spread = fxSpreadPercent / 100
        let rate = (now.rate * (dollars.side == .buy ? 1 + spread : 1 - spread)).rounded(6)
        let sign: Decimal = dollars.side == .buy ? 1 : -1
        let quote = FxCurrency.price(dollars.quote, at: rate)
        let spreadPrice = FxCurrency.price(dollars.quote + sign * dollars.spread, at: rate)
        let price = FxCurrency.price(dollars.price, at: rate)
        return (FillPricing(side: dollars.side, quote: quote, spread: sign * (spreadPrice - quote), impact: sign * (price - spreadPrice)), rate)
    }

    /// Refuses a fill the rules do not allow: a sale whose proceeds would not pay its fee
    /// (`proceedsBelowFee`; the cash held is not for that), or a buy that would make the
    /// symbol more than `maxPositionPercent` of the portfolio's net worth, valued at
    /// current prices (`positionLimit`).
    func checkFill(_ side: TradeSide, _ order: TradeOrder, in store: TradingStore) async throws {
        switch side {
        case .sell:
            if order.amount < order.fee { throw TradingError.proceedsBelowFee }
        case .buy:
            guard maxPositionPercent < 100, let exposure = try await store.exposure(
                userID: order.userID, portfolioID: order.portfolioID, symbol: order.symbol) else { return }
            guard allowsPosition(exposure.position + order.amount, netWorth: exposure.netWorth - order.fee) else {
                throw TradingError.positionLimit(maxPositionPercent)
            }
        }
    }
}

/// How a league prices fills (`fillPrice`): at the last price, or at a quote around it.
enum FillPriceRule: String, Codable, Sendable, PostgresCodable {
    case last
    case quote
}

/// What made a fill: a trade (`POST /api/stock/buy|sell`), an order, or a forced sale of
/// a margin call.
public enum TradeSource: String, Codable, Sendable, PostgresCodable {
    case trade
    case order
    case liquidation
}

/// Where a fill's price per share came from (`TradingRules.pricing`): the quote (the last
/// price), the spread around it and the impact of the order's size, each ≥ 0. A buy pays
/// quote + spread + impact, a sale gets quote − spread − impact.
struct FillPricing: Sendable, Equatable {
    let side: TradeSide
    let quote: Decimal
    let spread: Decimal
    let impact: Decimal

    init(side: TradeSide, quote: Decimal, spread: Decimal = 0, impact: Decimal = 0) {
        self.side = side
        self.quote = quote
        self.spread = spread
        self.impact = impact
    }

    /// A recorded trade's pricing: its price, spread and impact give the quote.
    init(side: TradeSide, price: Decimal, spread: Decimal, impact: Decimal) {
        self.init(side: side, quote: side == .buy ? price - spread - impact : price + spread + impact, spread: spread, impact: impact)
    }

    /// An activity's pricing: a fill's, nil for any other activity.
    init?(activity side: TradeSide?, price: Decimal?, spread: Decimal?, impact: Decimal?) {
        guard let side, let price, let spread, let impact else { return nil }
        self.init(side: side, price: price, spread: spread, impact: impact)
    }

    var price: Decimal { side == .buy ? quote + spread + impact : quote - spread - impact }
}

/// League rules as sent when creating a league; every field is optional and defaults to
/// the server's rules.
struct TradingRulesInput: Decodable, Sendable {
    let commissionFlat: DecimalInput?
    let commissionPercent: DecimalInput?
    let allowShortSelling: Bool?
    let shortMarginPercent: DecimalInput?
    let maxPositionPercent: DecimalInput?
    let allowedOrderTypes: [String]?
    let allowedSymbols: [String]?
    let fxSpreadPercent: DecimalInput?
    let fillPrice: String?
    let spreadBps: DecimalInput?
    let impactCoefficient: DecimalInput?
    let minPrice: DecimalInput?
    let minShortPrice: DecimalInput?
    let volumeCapPercent: DecimalInput?
    let marginPercent: DecimalInput?
    let maintenancePercent: DecimalInput?
    let debitRatePercent: DecimalInput?
    let creditRatePercent: DecimalInput?
    let borrowFeePercent: DecimalInput?

    /// The checked rules, over `defaults`; symbols are normalised but not looked up.
    func rules(over defaults: TradingRules) throws -> TradingRules {
        var rules = defaults
        try Self.set(&rules.commission.flat, commissionFlat, "rules.commissionFlat", 0...1_000_000)
        try Self.set(&rules.commission.percent, commissionPercent, "rules.commissionPercent", 0...10)
        rules.allowShortSelling = allowShortSelling ?? rules.allowShortSelling
        try Self.set(&rules.shortMarginPercent, shortMarginPercent, "rules.shortMarginPercent", 100...1000)
        if let limit = maxPositionPercent?.value {
            try Self.check(limit, "rules.maxPositionPercent", 0...100)
            guard limit > 0 else { throw InvalidInput("rules.maxPositionPercent must be above 0.") }
            rules.maxPositionPercent = limit
        }
        if let types = allowedOrderTypes {
            let parsed = try types.map { name in
                guard let type = OrderType(rawValue: name) else {
                    throw InvalidInput("rules.allowedOrderTypes may hold \(OrderType.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                return type
            }
            guard !parsed.isEmpty else { throw InvalidInput("rules.allowedOrderTypes must allow at least one type.") }
            rules.allowedOrderTypes = Set(parsed)
        }
        if let symbols = allowedSymbols {
            guard (1...1000).contains(symbols.count) else { throw InvalidInput("rules.allowedSymbols must list 1 to 1000 symbols.") }
            let normalized = symbols.map(Symbol.normalize)
            if let bad = normalized.first(where: { !Symbol.isValid($0) }) {
                throw InvalidInput("rules.allowedSymbols holds \(bad.debugDescription), which is not a symbol.")
            }
            rules.allowedSymbols = Set(normalized)
        }
        try Self.set(&rules.fxSpreadPercent, fxSpreadPercent, "rules.fxSpreadPercent", 0...10)
        if let fillPrice {
            guard let rule = FillPriceRule(rawValue: fillPrice) else { throw InvalidInput("rules.fillPrice must be last or quote.") }
            rules.fillPrice = rule
        }
        try Self.set(&rules.spreadBps, spreadBps, "rules.spreadBps", 0...500)
        try Self.set(&rules.impactCoefficient, impactCoefficient, "rules.impactCoefficient", 0...1)
        try Self.set(&rules.minPrice, minPrice, "rules.minPrice", 0...1_000_000)
        try Self.set(&rules.minShortPrice, minShortPrice, "rules.minShortPrice", 0...1_000_000)
        try Self.set(&rules.volumeCapPercent, volumeCapPercent, "rules.volumeCapPercent", Decimal(string: "0.1")!...100)
        try Self.set(&rules.marginPercent, marginPercent, "rules.marginPercent", 25...100)
        try Self.set(&rules.maintenancePercent, maintenancePercent, "rules.maintenancePercent", 10...100)
        try Self.set(&rules.debitRatePercent, debitRatePercent, "rules.debitRatePercent", 0...50)
        try Self.set(&rules.creditRatePercent, creditRatePercent, "rules.creditRatePercent", 0...20)
        try Self.set(&rules.borrowFeePercent, borrowFeePercent, "rules.borrowFeePercent", 0...100)
        return rules
    }

    /// Sets `target` to `input` when it was sent, checked against `range`.
    private static func set(_ target: inout Decimal, _ input: DecimalInput?, _ field: String, _ range: ClosedRange<Decimal>) throws {
        guard let value = input?.value else { return }
        try check(value, field, range)
        target = value
    }

    private static func set(_ target: inout Decimal?, _ input: DecimalInput?, _ field: String, _ range: ClosedRange<Decimal>) throws {
        guard let value = input?.value else { return }
        try check(value, field, range)
        target = value
    }

    private static func check(_ value: Decimal, _ field: String, _ range: ClosedRange<Decimal>) throws {
        guard range.contains(value), value.rounded(4) == value else {
            throw InvalidInput("\(field) must be from \(range.lowerBound) to \(range.upperBound), with at most 4 decimals.")
        }
    }
}

/// League rules as clients see them (in `League`).
struct TradingRulesBody: Encodable, Sendable {
    let commissionFlat: String
    let commissionPercent: String
    let allowShortSelling: Bool
    let shortMarginPercent: String
    let maxPositionPercent: String
    let allowedOrderTypes: [OrderType]
    @NullEncoded var allowedSymbols: [String]?
    let fxSpreadPercent: String
    let fillPrice: FillPriceRule
    let spreadBps: String
    let impactCoefficient: String
    let minPrice: String
    let minShortPrice: String
    @NullEncoded var volumeCapPercent: String?
    @NullEncoded var marginPercent: String?
    @NullEncoded var maintenancePercent: String?
    let debitRatePercent: String
    let creditRatePercent: String
    let borrowFeePercent: String

    init(_ rules: TradingRules) {
        commissionFlat = rules.commission.flat.moneyString
        commissionPercent = rules.commission.percent.moneyString
        allowShortSelling = rules.allowShortSelling
        shortMarginPercent = rules.shortMarginPercent.moneyString
        maxPositionPercent = rules.maxPositionPercent.moneyString
        allowedOrderTypes = OrderType.allCases.filter(rules.allowedOrderTypes.contains)
        allowedSymbols = rules.allowedSymbols?.sorted()
        fxSpreadPercent = rules.fxSpreadPercent.moneyString
        fillPrice = rules.fillPrice
        spreadBps = rules.spreadBps.moneyString
        impactCoefficient = rules.impactCoefficient.description
        minPrice = rules.minPrice.moneyString
        minShortPrice = rules.minShortPrice.moneyString
        volumeCapPercent = rules.volumeCapPercent.map { "\($0)" }
        marginPercent = rules.marginPercent?.moneyString
        maintenancePercent = rules.maintenancePercent?.moneyString
        debitRatePercent = rules.debitRatePercent.moneyString
        creditRatePercent = rules.creditRatePercent.moneyString
        borrowFeePercent = rules.borrowFeePercent.moneyString
    }
}

/// Finds the rules of a portfolio, remembering them: a league's rules never change once
/// it exists, so a cached answer is never wrong.
struct TradingRulesBook: Sendable {
    let pool: PostgresConnectionPool
    let serverRules: TradingRules
    /// The previous day's volumes the rules of realistic fills price by.
    let volumes: DailyVolumes
    struct Key: Hashable {
        let userID: Int
        let portfolioID: Int
    }

    let cache: ExpiringCache<Key, TradingRules>

    init(pool: PostgresConnectionPool, serverRules: TradingRules, volumes: DailyVolumes) {
        self.pool = pool
        self.serverRules = serverRules
        self.volumes = volumes
        cache = ExpiringCache(lifetime: .seconds(600), capacity: 10_000)
    }

    /// The rules of the user's portfolio `portfolioID` (nil: the personal one); the
    /// server's rules when it is personal or not theirs (the trade then finds no portfolio).
    func rules(userID: Int, portfolioID: Int?) async throws -> TradingRules {
        guard let portfolioID else { return serverRules }
        let key = Key(userID: userID, portfolioID: portfolioID)
        if let rules = cache.value(for: key) { return rules }
        let found = try await PortfolioAccess.resolving(userID: userID, portfolioID: portfolioID, trading: true, run: pool.query) { holder in
            try await pool.query(
                """
                SELECT leagues.id, \(unescaped: LeagueRulesColumns.select) FROM portfolios p LEFT JOIN leagues ON leagues.id = p.league_id
                WHERE p.id = \(portfolioID) AND p.user_id = \(holder)
                """
            ).first
        }
        guard let row = found else { return serverRules }
        let rules = try row.decode(Int?.self, column: "id") == nil ? serverRules : LeagueRulesColumns.rules(row, over: serverRules)
        cache.store(rules, for: key)
        return rules
    }
}

/// The rule columns of `leagues`, read into `TradingRules` by name.
enum LeagueRulesColumns {
    static let select = """
        commission_flat, commission_percent, allow_short_selling, short_margin_percent, max_position_percent, \
        array_to_string(allowed_order_types, ',') AS allowed_order_types, \
        array_to_string(allowed_symbols, ',') AS allowed_symbols, currency, fx_spread_percent, \
        fill_price, spread_bps, impact_coefficient, min_price, min_short_price, volume_cap_percent, \
        margin_percent, maintenance_percent, debit_rate_percent, credit_rate_percent, borrow_fee_percent, \
        (SELECT m.league_id FROM league_markets m WHERE m.league_id = leagues.id) AS market_league
        """

    /// The columns `values` fills, in its order.
    static let names = """
        commission_flat, commission_percent, allow_short_selling, short_margin_percent, max_position_percent, \
        allowed_order_types, allowed_symbols, currency, fx_spread_percent, \
        fill_price, spread_bps, impact_coefficient, min_price, min_short_price, volume_cap_percent, \
        margin_percent, maintenance_percent, debit_rate_percent, credit_rate_percent, borrow_fee_percent
        """

    static func rules(_ row: PostgresRow, over serverRules: TradingRules) throws -> TradingRules {
        var rules = serverRules
        rules.commission = Commission(
            flat: try row.decode(Decimal?.self, column: "commission_flat") ?? serverRules.commission.flat,
            percent: try row.decode(Decimal.self, column: "commission_percent")
        )
        rules.allowShortSelling = try row.decode(Bool.self, column: "allow_short_selling")
        rules.shortMarginPercent = try row.decode(Decimal.self, column: "short_margin_percent")
        rules.maxPositionPercent = try row.decode(Decimal.self, column: "max_position_percent")
        rules.allowedOrderTypes = Set(try row.decode(String.self, column: "allowed_order_types").split(separator: ",")
            .compactMap { OrderType(rawValue: String($0)) })
        rules.allowedSymbols = try row.decode(String?.self, column: "allowed_symbols").map { Set($0.split(separator: ",").map(String.init)) }
        rules.currency = try row.decode(String.self, column: "currency")
        rules.fxSpreadPercent = try row.decode(Decimal.self, column: "fx_spread_percent")
        rules.fillPrice = try row.decode(FillPriceRule.self, column: "fill_price")
        rules.spreadBps = try row.decode(Decimal.self, column: "spread_bps")
        rules.impactCoefficient = try row.decode(Decimal.self, column: "impact_coefficient")
        rules.minPrice = try row.decode(Decimal.self, column: "min_price")
        rules.minShortPrice = try row.decode(Decimal.self, column: "min_short_price")
        rules.volumeCapPercent = try row.decode(Decimal?.self, column: "volume_cap_percent")
        rules.marginPercent = try row.decode(Decimal?.self, column: "margin_percent")
        rules.maintenancePercent = try row.decode(Decimal?.self, column: "maintenance_percent")
        rules.debitRatePercent = try row.decode(Decimal.self, column: "debit_rate_percent")
        rules.creditRatePercent = try row.decode(Decimal.self, column: "credit_rate_percent")
        rules.borrowFeePercent = try row.decode(Decimal.self, column: "borrow_fee_percent")
        rules.market = try row.decode(Int?.self, column: "market_league")
        return rules
    }

    /// The values to store for `rules`, in the order of `select`.
    static func values(_ rules: TradingRules) -> PostgresQuery {
        let types = OrderType.allCases.filter(rules.allowedOrderTypes.contains).map(\.rawValue)
        let symbols = rules.allowedSymbols.map { $0.sorted() }
        return """
            \(rules.commission.flat), \(rules.commission.percent), \(rules.allowShortSelling), \(rules.shortMarginPercent),
            \(rules.maxPositionPercent), \(types)::text[], \(symbols)::text[], \(rules.currency), \(rules.fxSpreadPercent),
            \(rules.fillPrice), \(rules.spreadBps), \(rules.impactCoefficient), \(rules.minPrice), \(rules.minShortPrice),
            \(rules.volumeCapPercent)::numeric, \(rules.marginPercent)::numeric, \(rules.maintenancePercent)::numeric, \(rules.debitRatePercent), \(rules.creditRatePercent),
            \(rules.borrowFeePercent)
            """
    }
}
