import Foundation
import Postgres

/// Buying, selling and valuing portfolios.
struct TradingService: Sendable {
    let store: TradingStore
    let market: MarketStore
    let quotes: any QuoteProvider
    let rules: TradingRulesBook
    let backdating: BackdatedTrades

    /// Whether prices are fetched when read (`QUOTE_PROVIDER=http`): a valuation brings the
    /// held symbols' prices up to date first.
    var fetchesQuotesOnDemand: Bool { quotes.fetchesOnDemand }

    /// Trades at the provider's current price, or in a practice portfolio at the close of
    /// the day `at`. The price is asked for before anything is locked; the trade itself is
    /// one SQL statement. With an idempotency key, the first outcome is remembered and
    /// returned to every repeat of the same request.
    func trade(
        _ side: TradeSide, userID: Int, symbol rawSymbol: String, quantity: Int, portfolioID: Int?,
        at: String? = nil, note rawNote: String? = nil, idempotencyKey: String?
    ) async throws -> TradeResult {
        let shown = Symbol.normalize(rawSymbol)
        try BackdatedTrades.check(at)
        let note = try JournalNote.parse(rawNote)
        let requestHash = Self.hash(side, shown, quantity, portfolioID, at, note)
        let idempotency = idempotencyKey.map { key in (key: key, requestHash: requestHash) }
        // A trade with a journal note is written with its order row, where the journal reads it.
        let fill: OrderToFill = note == nil ? .marketTrade : .market(clientOrderID: nil, requestHash: requestHash, timeInForce: .day)
        if let idempotency, let earlier = try await store.remembered(userID: userID, key: idempotency.key) {
            return try replay(earlier, idempotency.requestHash, symbol: shown)
        }
        let rules = try await rules.rules(userID: userID, portfolioID: portfolioID)
        try rules.check(type: .market, symbol: shown)
        // In a scenario league, the league's own instrument of that name.
        let symbol = try rules.instrument(shown)
        let checked = { (order: TradeOrder) async throws -> TradeOrder in
            try await rules.checkFill(side, order, in: store)
            return order
        }
        do {
            if let at {
                return try Self.result(try await backdating.fill(side, symbol: symbol, on: at) { close in
                    try await checked(rules.order(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity,
                                                  price: close, fill: fill, idempotency: idempotency, note: note))
                }, symbol: symbol)
            }
            let quote = try await quotes.quote(for: symbol, knownIn: market)
            guard let priced = try await rules.fill(
                side, quote: quote.price, quotes: quotes, volumes: self.rules.volumes, userID: userID, portfolioID: portfolioID,
                symbol: symbol, quantity: quantity, fill: fill, idempotency: idempotency, note: note
            ) else { throw TradingError.incompleteRecord }
            let order = try await checked(priced)
            return try Self.result(try await store.execute(side, order), symbol: symbol)
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
        return TradeResult(trade: Trade(trade), cash: cash.moneyString, position: .init(symbol: Symbol.shown(symbol), quantity: position))
    }

    private static func hash(_ side: TradeSide, _ symbol: String, _ quantity: Int, _ portfolioID: Int?, _ at: String?, _ note: String?) -> String {
        let text = "\(side.rawValue)\n\(symbol)\n\(quantity)\n\(portfolioID.map(String.init) ?? "personal")" + (at.map { "\n\($0)" } ?? "")
            + (note.map { "\nnote \($0)" } ?? "")
        return text.sha256Hex
    }

    // MARK: Valuation

    /// Every portfolio of the user's, valued now (without the day's change).
    func portfolios(userID: Int) async throws -> [PortfolioValuation] {
        try await valuations(userID: userID, .all, dayChange: false)
    }

    /// The user's portfolio `id` (nil: the personal one), valued now; `dayChange` reads
    /// the holdings' previous closes too; `polled`: a bot's poll, which a replica holding
    /// every acknowledged commit may answer.
    func portfolio(userID: Int, id: Int?, dayChange: Bool = false, polled: Bool = false) async throws -> PortfolioValuation {
        guard let portfolio = try await valuations(userID: userID, .one(id), dayChange: dayChange, polled: polled).first else {
            throw TradingError.noSuchPortfolio
        }
        return portfolio
    }

    /// Valuations read from the stored prices; a provider that fetches prices on demand
    /// (`http`) first brings the held symbols' prices and the rates up to date.
    private func valuations(
        userID: Int, _ scope: TradingStore.PortfolioScope, dayChange: Bool, polled: Bool = false
    ) async throws -> [PortfolioValuation] {
        let valued = try await store.valuations(userID: userID, scope, dayChange: dayChange, polled: polled)
        guard quotes.fetchesOnDemand else { return valued }
        let symbols = Set(valued.flatMap { $0.holdings.map(\.symbol) }).sorted()
        guard !symbols.isEmpty else { return valued }
        _ = try await quotes.quotes(for: symbols)
        let currencies = Set(valued.map(\.currency)).subtracting([FxCurrency.dollar]).sorted()
        if !currencies.isEmpty { _ = try await quotes.fxRates(base: FxCurrency.dollar, currencies: currencies) }
        return try await store.valuations(userID: userID, scope, dayChange: dayChange, polled: polled)
    }

    // MARK: History

    func trades(userID: Int, portfolioID: Int?, symbol: String?, before: Int?, limit: Int) async throws -> CursorPage<Trade> {
        guard let portfolio = try await store.portfolio(userID: userID, id: portfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let market = try await rules.rules(userID: userID, portfolioID: portfolioID).market
        let rows = try await store.trades(
            portfolioID: portfolio.id, symbol: symbol.map { Symbol.stored(Symbol.normalize($0), inLeague: market) }, before: before,
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
