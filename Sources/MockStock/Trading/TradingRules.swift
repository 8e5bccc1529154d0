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
               fill: OrderToFill = .marketTrade, idempotency: (key: String, requestHash: String)? = nil, note: String? = nil,
               journalExempt: Bool = false, byKey: Bool = false) -> TradeOrder {
        TradeOrder(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: price,
                   fee: commission.fee(for: price * Decimal(quantity)), fill: fill, shortMarginPercent: shortSellingMargin,
                   idempotency: idempotency, fxRate: fxRate, note: note, journalExempt: journalExempt, byKey: byKey)
    }

    /// A `side` fill of `quantity` shares quoted at `quote` dollars, priced under these
    /// rules (`localPrice`, and the commission on the amount): the one pricing step of every
    /// fill made at a quote — an immediate trade, a market order, a resting order the
    /// matcher fills — and of the most a resting order may cost, which it reserves. The
    /// fill statement (`TradeStatement`) takes the price it gives as its input. (A
    /// back-dated fill is priced at a past day's close instead: `order`.)
    func fill(
        _ side: TradeSide, quote: Decimal, quotes: any QuoteProvider, userID: Int, portfolioID: Int?, symbol: String, quantity: Int,
        fill: OrderToFill = .marketTrade, idempotency: (key: String, requestHash: String)? = nil, note: String? = nil,
        journalExempt: Bool = false, byKey: Bool = false
    ) async throws -> TradeOrder {
        let local = try await localPrice(quote, side, quotes: quotes)
        return order(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: local.price,
                     fxRate: local.fxRate, fill: fill, idempotency: idempotency, note: note, journalExempt: journalExempt,
                     byKey: byKey)
    }

    /// The price a `side` fill pays or gets for a share quoted at `price` dollars, in the
    /// portfolio's currency: the dollar price where that is dollars; else at the rate now
    /// plus the spread for a buy, minus it for a sale (the rate to six decimals, the price
    /// to four), with the rate it applied. `FxError.noRate` when the currency has none now.
    private func localPrice(_ price: Decimal, _ side: TradeSide, quotes: any QuoteProvider) async throws -> (price: Decimal, fxRate: Decimal?) {
        guard currency != FxCurrency.dollar else { return (price, nil) }
        guard let now = try await quotes.fxRate(from: FxCurrency.dollar, to: currency) else {
            throw FxError.noRate(FxCurrency.dollar, currency)
        }
        let spread = fxSpreadPercent / 100
        let rate = (now.rate * (side == .buy ? 1 + spread : 1 - spread)).rounded(6)
        return (FxCurrency.price(price, at: rate), rate)
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

    /// The checked rules, over `defaults`; symbols are normalised but not looked up.
    func rules(over defaults: TradingRules) throws -> TradingRules {
        var rules = defaults
        if let flat = commissionFlat?.value {
            try Self.check(flat, "rules.commissionFlat", 0...1_000_000)
            rules.commission.flat = flat
        }
        if let percent = commissionPercent?.value {
            try Self.check(percent, "rules.commissionPercent", 0...10)
            rules.commission.percent = percent
        }
        rules.allowShortSelling = allowShortSelling ?? rules.allowShortSelling
        if let margin = shortMarginPercent?.value {
            try Self.check(margin, "rules.shortMarginPercent", 100...1000)
            rules.shortMarginPercent = margin
        }
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
        if let spread = fxSpreadPercent?.value {
            try Self.check(spread, "rules.fxSpreadPercent", 0...10)
            rules.fxSpreadPercent = spread
        }
        return rules
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

    init(_ rules: TradingRules) {
        commissionFlat = rules.commission.flat.moneyString
        commissionPercent = rules.commission.percent.moneyString
        allowShortSelling = rules.allowShortSelling
        shortMarginPercent = rules.shortMarginPercent.moneyString
        maxPositionPercent = rules.maxPositionPercent.moneyString
        allowedOrderTypes = OrderType.allCases.filter(rules.allowedOrderTypes.contains)
        allowedSymbols = rules.allowedSymbols?.sorted()
        fxSpreadPercent = rules.fxSpreadPercent.moneyString
    }
}

/// Finds the rules of a portfolio, remembering them: a league's rules never change once
/// it exists, so a cached answer is never wrong.
struct TradingRulesBook: Sendable {
    let pool: PostgresConnectionPool
    let serverRules: TradingRules
    struct Key: Hashable {
        let userID: Int
        let portfolioID: Int
    }

    let cache: ExpiringCache<Key, TradingRules>

    init(pool: PostgresConnectionPool, serverRules: TradingRules) {
        self.pool = pool
        self.serverRules = serverRules
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
        array_to_string(allowed_symbols, ',') AS allowed_symbols, currency, fx_spread_percent
        """

    /// The columns `values` fills, in its order.
    static let names = """
        commission_flat, commission_percent, allow_short_selling, short_margin_percent, max_position_percent, \
        allowed_order_types, allowed_symbols, currency, fx_spread_percent
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
        return rules
    }

    /// The values to store for `rules`, in the order of `select`.
    static func values(_ rules: TradingRules) -> PostgresQuery {
        let types = OrderType.allCases.filter(rules.allowedOrderTypes.contains).map(\.rawValue)
        let symbols = rules.allowedSymbols.map { $0.sorted() }
        return """
            \(rules.commission.flat), \(rules.commission.percent), \(rules.allowShortSelling), \(rules.shortMarginPercent),
            \(rules.maxPositionPercent), \(types)::text[], \(symbols)::text[], \(rules.currency), \(rules.fxSpreadPercent)
            """
    }
}
