import Foundation
import Postgres

/// Buying, selling and valuing portfolios.
struct TradingService: Sendable {
    let store: TradingStore
    let market: MarketStore
    let quotes: any QuoteProvider
    let rules: TradingRulesBook
    let backdating: BackdatedTrades

    /// Trades at the provider's current price, or in a practice portfolio at the close of
    /// the day `at`. The price is asked for before anything is locked; the trade itself is
    /// one SQL statement. With an idempotency key, the first outcome is remembered and
    /// returned to every repeat of the same request.
    func trade(
        _ side: TradeSide, userID: Int, symbol rawSymbol: String, quantity: Int, portfolioID: Int?,
        at: String? = nil, idempotencyKey: String?
    ) async throws -> TradeResult {
        let symbol = Symbol.normalize(rawSymbol)
        try BackdatedTrades.check(at)
        let idempotency = idempotencyKey.map { key in
            (key: key, requestHash: Self.hash(side, symbol, quantity, portfolioID, at))
        }
        if let idempotency, let earlier = try await store.remembered(userID: userID, key: idempotency.key) {
            return try replay(earlier, idempotency.requestHash, symbol: symbol)
        }
        let rules = try await rules.rules(userID: userID, portfolioID: portfolioID)
        try rules.check(type: .market, symbol: symbol)
        let order = { (price: Decimal, fxRate: Decimal?) async throws -> TradeOrder in
            let order = rules.order(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity,
                                    price: price, fxRate: fxRate, idempotency: idempotency)
            try await rules.checkFill(side, order, in: store)
            return order
        }
        do {
            if let at {
                return try Self.result(try await backdating.fill(side, symbol: symbol, on: at) { try await order($0, nil) }, symbol: symbol)
            }
            let quote = try await quotes.quote(for: symbol, knownIn: market)
            let local = try await rules.localPrice(quote.price, side, quotes: quotes)
            return try Self.result(try await store.execute(side, order(local.price, local.fxRate)), symbol: symbol)
        } catch TradingError.idempotencyKeyInFlight {
            // The same request ran at the same moment and won: answer what it answered.
            guard let idempotency, let earlier = try await store.remembered(userID: userID, key: idempotency.key) else {
                throw TradingError.idempotencyKeyInFlight
            }
            return try replay(earlier, idempotency.requestHash, symbol: symbol)
        }
    }

    private func replay(_ earlier: (requestHash: String, execution: TradingStore.Execution), _ requestHash: String, symbol: String) throws -> TradeResult {
        guard earlier.requestHash == requestHash else { throw TradingError.idempotencyKeyReused }
        return try Self.result(earlier.execution, symbol: symbol)
    }

    private static func result(_ execution: TradingStore.Execution, symbol: String) throws -> TradeResult {
        try execution.outcome.check()
        guard let trade = execution.trade, let cash = execution.cash, let position = execution.position else {
            throw TradingError.incompleteRecord
        }
        return TradeResult(trade: Trade(trade), cash: cash.moneyString, position: .init(symbol: symbol, quantity: position))
    }

    private static func hash(_ side: TradeSide, _ symbol: String, _ quantity: Int, _ portfolioID: Int?, _ at: String?) -> String {
        let text = "\(side.rawValue)\n\(symbol)\n\(quantity)\n\(portfolioID.map(String.init) ?? "personal")" + (at.map { "\n\($0)" } ?? "")
        return text.sha256Hex
    }

    // MARK: Valuation

    func portfolios(userID: Int) async throws -> [PortfolioSummary] {
        let portfolios = try await store.portfoliosWithHoldings(userID: userID, .all)
        let prices = try await currentPrices(portfolios.flatMap(\.1))
        let rates = try await exchangeRates(Set(portfolios.map(\.0.cashCurrency)))
        return portfolios.map { portfolio, held in
            let rate = rates[portfolio.cashCurrency] ?? 1
            let value = held.reduce(Decimal(0)) { $0 + FxCurrency.price(prices[$1.symbol]?.price ?? 0, at: rate) * Decimal($1.quantity) }
            return PortfolioSummary(
                id: portfolio.id, leagueId: portfolio.leagueID, name: portfolio.name,
                cash: portfolio.cash.moneyString, netWorth: (portfolio.cash + value).moneyString,
                practice: portfolio.practice, baseCurrency: portfolio.baseCurrency, currency: portfolio.cashCurrency
            )
        }
    }

    /// Units of each currency per dollar now, to value dollar prices in a portfolio's own
    /// currency (`FxError.noRate` for one without a rate).
    private func exchangeRates(_ currencies: Set<String>) async throws -> [String: Decimal] {
        let others = currencies.subtracting([FxCurrency.dollar]).sorted()
        guard !others.isEmpty else { return [:] }
        let now = try await quotes.fxRates(base: FxCurrency.dollar, currencies: others)
        if let missing = others.first(where: { now[$0] == nil }) { throw FxError.noRate(FxCurrency.dollar, missing) }
        return now.mapValues(\.rate)
    }

    func portfolio(userID: Int, id: Int?) async throws -> Portfolio {
        guard let (portfolio, held) = try await store.portfoliosWithHoldings(userID: userID, .one(id)).first else {
            throw TradingError.noSuchPortfolio
        }
        let prices = try await currentPrices(held)
        let rate = try await exchangeRates([portfolio.cashCurrency])[portfolio.cashCurrency] ?? 1
        var total = Decimal(0)
        let holdings = held.map { holding in
            let quote = prices[holding.symbol]
            let price = FxCurrency.price(quote?.price ?? 0, at: rate)
            let quantity = Decimal(holding.quantity)
            let value = price * quantity
            total += value
            return Portfolio.Holding(
                symbol: holding.symbol, name: holding.name, quantity: holding.quantity, price: price.moneyString,
                value: value.moneyString, averageCost: (holding.costBasis / quantity).rounded(4).moneyString,
                unrealizedGain: (value - holding.costBasis).rounded(4).moneyString,
                dayChange: ((price - ((quote?.previousClose).map { FxCurrency.price($0, at: rate) } ?? price)) * quantity).moneyString
            )
        }
        return Portfolio(
            id: portfolio.id, leagueId: portfolio.leagueID, currency: portfolio.cashCurrency, cash: portfolio.cash.moneyString,
            reserved: portfolio.reserved.moneyString, buyingPower: (portfolio.cash - portfolio.reserved).moneyString,
            holdingsValue: total.moneyString, netWorth: (portfolio.cash + total).moneyString, holdings: holdings
        )
    }

    private func currentPrices(_ holdings: [TradingStore.HoldingRecord]) async throws -> [String: PriceQuote] {
        let symbols = Array(Set(holdings.map(\.symbol))).sorted()
        return symbols.isEmpty ? [:] : try await quotes.quotes(for: symbols)
    }

    // MARK: History

    func trades(userID: Int, portfolioID: Int?, symbol: String?, before: Int?, limit: Int) async throws -> CursorPage<Trade> {
        guard let portfolio = try await store.portfolio(userID: userID, id: portfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let rows = try await store.trades(
            portfolioID: portfolio.id, symbol: symbol.map(Symbol.normalize), before: before,
            limit: CursorPage<Trade>.rowsToRead(limit: limit)
        )
        return CursorPage(rows: rows, limit: limit, id: \.id, transform: Trade.init)
    }

    func cashMovements(userID: Int, portfolioID: Int?, before: Int?, limit: Int) async throws -> CursorPage<CashMovement> {
        guard let portfolio = try await store.portfolio(userID: userID, id: portfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let rows = try await store.cashMovements(
            portfolioID: portfolio.id, before: before, limit: CursorPage<CashMovement>.rowsToRead(limit: limit)
        )
        return CursorPage(rows: rows, limit: limit, id: \.id) {
            CashMovement(id: $0.id, portfolioId: $0.portfolioID, kind: $0.kind, amount: $0.amount.moneyString,
                         note: $0.note, createdAt: $0.createdAt)
        }
    }

    /// Activities of one portfolio, newest first; `before` is a cursor from an earlier page.
    func activities(userID: Int, portfolioID: Int?, before: String?, limit: Int) async throws -> ActivityPage {
        guard let portfolio = try await store.portfolio(userID: userID, id: portfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let cursor = try before.map(Self.activityCursor)
        let rows = try await store.activities(portfolioID: portfolio.id, before: cursor, limit: limit + 1)
        let items = rows.prefix(limit)
        return ActivityPage(items: items.map(Activity.init), nextBefore: rows.count > limit ? items.last?.cursor : nil)
    }

    /// A cursor is "time~source~id", as pages hand them out.
    static func activityCursor(_ text: String) throws -> (at: String, source: Int, id: Int) {
        let parts = text.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/) != nil,
              let source = Int(parts[1]), (1...3).contains(source), let id = Int(parts[2]), id > 0 else {
            throw InvalidInput("before must be a cursor from an earlier page.")
        }
        return (String(parts[0]), source, id)
    }
}
