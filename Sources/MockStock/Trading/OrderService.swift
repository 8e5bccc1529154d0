import Foundation
import Postgres

/// Placing, reading and cancelling orders. A market order while the market is open fills
/// at once through the trade statement; every other order rests with a reservation until
/// `OrderMatcher` fills it or it is cancelled or expires.
struct OrderService: Sendable {
    let store: OrderStore
    let trading: TradingStore
    let market: MarketStore
    let quotes: any QuoteProvider
    let matcher: OrderMatcher
    let hours: MarketHours
    let rules: TradingRulesBook
    let backdating: BackdatedTrades
    let now: @Sendable () -> Date

    /// Places an order; `created` is false when the same `clientOrderId` and body were
    /// sent before and that order is returned instead.
    ///
    /// An order with a `clientOrderId` is not looked up before it is placed: if one was
    /// placed under that id, placing again meets it on the unique index (and rolls back),
    /// or is refused before that (the first one holds the cash now, the market closed);
    /// only then is the earlier order read, and answered if the body was the same. A new
    /// order costs no lookup.
    func place(_ ticket: OrderTicket, userID: Int) async throws -> (order: Order, created: Bool) {
        do {
            return (try await placeNew(ticket, userID: userID), true)
        } catch where ticket.clientOrderID != nil {
            if let earlier = try await earlierOrder(ticket, userID: userID) { return (earlier, false) }
            throw error
        }
    }

    private func placeNew(_ ticket: OrderTicket, userID: Int) async throws -> Order {
        if let day = ticket.at { return try await fillBackdated(ticket, userID: userID, on: day) }
        let (ticket, rules) = try await ruled(ticket, userID: userID)
        let quote = try await quotes.quote(for: ticket.symbol, knownIn: market)
        let moment = now()
        let isOpen = self.isOpen(at: moment, rules: rules)
        if ticket.timeInForce.fillsAtOnceOrNever && !isOpen { throw TradingError.marketClosed }
        // Fill or kill, whole: beyond what a volume cap leaves today it is refused (volume_cap).
        if ticket.timeInForce == .fok && isOpen && rules.volumeCapPercent != nil {
            _ = try await rules.fill(ticket.side, quote: quote.price, quotes: quotes, volumes: self.rules.volumes, userID: userID,
                                     portfolioID: ticket.portfolioID, symbol: ticket.symbol, quantity: ticket.quantity)
        }
        let id: Int
        do {
            // Under a volume cap a market order rests, for the matcher to fill what the cap allows.
            // An order with legs rests too, written with them, for the matcher to fill.
            if ticket.type == .market && isOpen && rules.volumeCapPercent == nil && ticket.legs.isEmpty {
                id = try await fillAtOnce(ticket, userID: userID, price: quote.price, rules: rules)
            } else {
                let placed = try await rest(ticket, userID: userID, lastPrice: quote.price, at: moment, rules: rules)
                id = placed.id
                if isOpen && placed.mayFillNow { try await matcher.match(orderID: id) }
                // An OCO's stop-loss is open at once: the price may already cross it.
                if isOpen && ticket.orderClass == .oco { for leg in placed.legs { try await matcher.match(orderID: leg) } }
                if ticket.timeInForce.fillsAtOnceOrNever {
                    try await store.close(.one(id: id), as: .canceled, reason: "Not filled at once.")
                }
            }
        }
        // Read by its id: this request placed it, though the player may have left its team
        // meanwhile. Gone by the time it is read: its account was deleted (a bot's, with its orders).
        guard let record = try await store.orders(ids: [id]).first else { throw TradingError.noSuchPortfolio }
        return Order(record)
    }

    /// The rules of the ticket's portfolio, with the ticket's order types and symbol
    /// checked against them, and the ticket naming the instrument it trades there (a
    /// scenario league's own, `TradingRules.instrument`, which refuses a stored name).
    private func ruled(_ ticket: OrderTicket, userID: Int) async throws -> (OrderTicket, TradingRules) {
        let rules = try await rules.rules(userID: userID, portfolioID: ticket.portfolioID)
        var ticket = ticket
        try rules.check(type: ticket.type, symbol: ticket.symbol)
        for leg in ticket.legs { try rules.check(type: leg.type, symbol: ticket.symbol) }
        ticket.symbol = try rules.instrument(ticket.symbol)
        return (ticket, rules)
    }

    /// The scenario league whose market the user's portfolio (nil: the personal one)
    /// trades in, for naming its symbols (`Symbol.stored`); nil for the real market.
    func market(userID: Int, portfolioID: Int?) async throws -> Int? {
        try await rules.rules(userID: userID, portfolioID: portfolioID).market
    }

    /// Whether orders under `rules` trade at `moment`: in the market's hours, or at any
    /// moment in a scenario league, whose market keeps the league's clock (its `day`
    /// orders expire when the league's day ends, `league_market_advance`).
    private func isOpen(at moment: Date, rules: TradingRules) -> Bool {
        rules.market != nil || hours.clock(at: moment).isOpen
    }

    /// The order placed before under the ticket's `clientOrderId`, if the body was the same.
    private func earlierOrder(_ ticket: OrderTicket, userID: Int) async throws -> Order? {
        guard let clientOrderID = ticket.clientOrderID,
              let earlier = try await store.order(userID: userID, clientOrderID: clientOrderID) else { return nil }
        guard earlier.requestHash == ticket.requestHash else { throw TradingError.idempotencyKeyReused }
        return Order(earlier)
    }

    /// A market order while the market is open: one fill statement writes the trade and
    /// the filled order.
    private func fillAtOnce(_ ticket: OrderTicket, userID: Int, price: Decimal, rules: TradingRules) async throws -> Int {
        guard let order = try await rules.fill(
            ticket.side, quote: price, quotes: quotes, volumes: self.rules.volumes, userID: userID, portfolioID: ticket.portfolioID,
            symbol: ticket.symbol, quantity: ticket.quantity, source: .order,
            fill: .market(clientOrderID: ticket.clientOrderID, requestHash: ticket.requestHash, timeInForce: ticket.timeInForce),
            note: ticket.note, journalExempt: ticket.journalExempt, byKey: ticket.byKey
        ) else { throw TradingError.incompleteRecord }
        try await rules.checkFill(ticket.side, order, in: trading)
        let execution = try await trading.execute(ticket.side, order)
        try execution.outcome.check()
        guard let id = execution.orderID else { throw TradingError.incompleteRecord }
        return id
    }

    /// A back-dated market order in a practice portfolio: filled at the close of `day`.
    private func fillBackdated(_ ticket: OrderTicket, userID: Int, on day: String) async throws -> Order {
        let (ticket, rules) = try await ruled(ticket, userID: userID)
        let execution = try await backdating.fill(ticket.side, symbol: ticket.symbol, on: day) { price in
            let order = rules.order(
                userID: userID, portfolioID: ticket.portfolioID, symbol: ticket.symbol, quantity: ticket.quantity, price: price,
                fill: .market(clientOrderID: ticket.clientOrderID, requestHash: ticket.requestHash, timeInForce: ticket.timeInForce),
                note: ticket.note, byKey: ticket.byKey
            )
            try await rules.checkFill(ticket.side, order, in: trading)
            return order
        }
        try execution.outcome.check()
        guard let id = execution.orderID, let record = try await store.orders(ids: [id]).first else {
            throw TradingError.incompleteRecord
        }
        return Order(record)
    }

    /// What placing `ticket` would hold back while the order rests, by the rule placing
    /// uses (`reservation`), in the portfolio's currency; a ticket placing would refuse is
    /// refused the same way (the placing statement is run and rolled back). Nothing is
    /// kept.
    func hold(_ ticket: OrderTicket, userID: Int) async throws -> (reservation: OrderStore.Reservation, currency: String) {
        let (ticket, rules) = try await ruled(ticket, userID: userID)
        let quote = try await quotes.quote(for: ticket.symbol, knownIn: market)
        let (reservation, _) = try await reservation(ticket, userID: userID, lastPrice: quote.price, at: now(), rules: rules)
        let outcome = try await store.wouldPlace(ticket, userID: userID, reservation: reservation)
        if outcome != .ok { _ = try Self.placed(.init(outcome: outcome, id: nil, mayFillNow: false)) }
        return (reservation, rules.currency)
    }

    /// An order that waits: it reserves what `reservation` says until it fills or closes.
    /// Returns the order and whether the current price may fill it at once.
    private func rest(
        _ ticket: OrderTicket, userID: Int, lastPrice: Decimal, at moment: Date, rules: TradingRules
    ) async throws -> (id: Int, mayFillNow: Bool, legs: [Int]) {
        let (reservation, expiresAt) = try await reservation(ticket, userID: userID, lastPrice: lastPrice, at: moment, rules: rules)
        let placed = try await store.place(ticket, userID: userID, reservation: reservation, expiresAt: expiresAt)
        return (try Self.placed(placed), placed.mayFillNow, placed.legs)
    }

    /// What a resting order holds back: the most its fill may cost (price × quantity plus
    /// the commission on that) or the shares it sells; and when it expires: a day order
    /// lasts until the close of the session that is open now or opens next.
    private func reservation(
        _ ticket: OrderTicket, userID: Int, lastPrice: Decimal, at moment: Date, rules: TradingRules
    ) async throws -> (OrderStore.Reservation, expiresAt: Date?) {
        // The fill the order may come to at the price it reserves at must be one the rules allow.
        // A limit caps what the fill may cost whatever the league's spread and impact; else the
        // price that sets the order off, or the last one, is priced as a fill would be.
        let most: TradeOrder
        if let limit = ticket.limitPrice, ticket.side == .buy {
            try rules.checkMinimum(.buy, last: lastPrice)
            let capped = FillPricing(side: .buy, quote: limit)
            most = try await rules.priced(capped, quotes: quotes, userID: userID, portfolioID: ticket.portfolioID,
                                          symbol: ticket.symbol, quantity: ticket.quantity)
        } else {
            // A trailing buy's stop only falls from where it starts: the most it may cost (one
            // more round trip, to the stop's one rule, when placing one).
            let price = ticket.type == .trailingStop && ticket.side == .buy
                ? try await store.trailingStop(.buy, best: lastPrice, percent: ticket.trailPercent, amount: ticket.trailPrice)
                : ticket.reservationPrice(lastPrice: lastPrice)
            guard let priced = try await rules.fill(
                ticket.side, quote: price, quotes: quotes, volumes: self.rules.volumes,
                userID: userID, portfolioID: ticket.portfolioID, symbol: ticket.symbol, quantity: ticket.quantity, capped: false
            ) else { throw TradingError.incompleteRecord }
            most = priced
        }
        try await rules.checkFill(ticket.side, most, in: trading)
        let reservation: OrderStore.Reservation = switch ticket.side {
        case .buy: .init(cash: most.amount + most.fee, shares: 0)
        case .sell: .init(cash: 0, shares: ticket.quantity, sharesFreeOnly: rules.allowShortSelling)
        }
        // A scenario league's day order expires when the league's day ends, not at a session's close.
        return (reservation, ticket.timeInForce == .gtc || rules.market != nil ? nil : hours.session(endingAfter: moment).close)
    }

    private static func placed(_ placed: OrderStore.Placed) throws -> Int {
        try placed.outcome.check()
        guard let id = placed.id else { throw TradingError.incompleteRecord }
        return id
    }

    /// Replaces an open order with one that has `changes` applied, in one transaction
    /// (`OrderStore.replace`): the old order closes as `replaced` and the new one, which
    /// names it, reserves afresh. If the new order is refused (buying power, shares,
    /// rules), the old one stays open as it was. Returns the new order.
    func replace(userID: Int, id: Int, with changes: OrderChanges) async throws -> Order {
        guard let old = try await store.order(userID: userID, id: id) else { throw TradingError.noSuchOrder }
        guard old.status == .new else {
            // A team's viewer replaces nothing, open or not.
            // (One whose seat went meanwhile no longer sees it at all.)
            if try await store.orderHolder(id: id, userID: userID, trading: true) != nil { throw TradingError.orderNotOpen }
            throw try await store.refusal(ofOrder: id, userID: userID)
        }
        guard old.orderClass == .simple else {
            throw InvalidInput("An order with legs (a \(old.orderClass.rawValue) order, or one of its legs) is not replaced: cancel it and place another.")
        }
        let changed = try OrderTicket(replacing: old, with: changes)
        if let clientOrderID = changed.clientOrderID, try await store.order(userID: userID, clientOrderID: clientOrderID) != nil {
            throw TradingError.idempotencyKeyReused
        }
        let (ticket, rules) = try await ruled(changed, userID: userID)
        let quote = try await quotes.quote(for: ticket.symbol, knownIn: market)
        let moment = now()
        let (reservation, expiresAt) = try await reservation(ticket, userID: userID, lastPrice: quote.price, at: moment, rules: rules)
        let placed = try await store.replace(id, with: ticket, userID: userID, reservation: reservation, expiresAt: expiresAt)
        let placedID = try Self.placed(placed)
        if placed.mayFillNow && isOpen(at: moment, rules: rules) { try await matcher.match(orderID: placedID) }
        guard let record = try await store.orders(ids: [placedID]).first else { throw TradingError.noSuchOrder }
        return Order(record)
    }

    // MARK: Reading and cancelling

    func order(userID: Int, id: Int) async throws -> Order {
        guard let record = try await store.order(userID: userID, id: id) else { throw TradingError.noSuchOrder }
        return Order(record)
    }

    func order(userID: Int, clientOrderID: String) async throws -> Order {
        guard let record = try await store.order(userID: userID, clientOrderID: clientOrderID) else { throw TradingError.noSuchOrder }
        return Order(record)
    }

    func orders(userID: Int, portfolioID: Int?, listing: OrderStore.Listing, symbol: String?, before: Int?, limit: Int) async throws -> CursorPage<Order> {
        guard let portfolio = try await trading.portfolio(userID: userID, id: portfolioID) else {
            throw TradingError.noSuchPortfolio
        }
        let market = try await self.market(userID: userID, portfolioID: portfolioID)
        let rows = try await store.orders(
            portfolioID: portfolio.id, listing: listing, symbol: symbol.map { Symbol.stored(Symbol.normalize($0), inLeague: market) }, before: before,
            limit: CursorPage<Order>.rowsToRead(limit: limit)
        )
        return CursorPage(rows: rows, limit: limit, id: \.id, transform: Order.init)
    }

    /// Cancels an open order. One that filled, expired or was cancelled meanwhile is
    /// `orderNotOpen`: its own record tells what happened.
    func cancel(userID: Int, id: Int) async throws -> Order {
        var closed = try await store.close(.usersOrder(userID: userID, id: id), as: .canceled)
        // None of the user's own: a team's order, cancelled as the team's account by its traders.
        let account = closed.isEmpty ? try await store.orderHolder(id: id, userID: userID, trading: true) : nil
        if let account, account != userID { closed = try await store.close(.usersOrder(userID: account, id: id), as: .canceled) }
        guard !closed.isEmpty else {
            throw account == nil ? try await store.refusal(ofOrder: id, userID: userID) : TradingError.orderNotOpen
        }
        return try await order(userID: userID, id: id)
    }

    /// Cancels every open order of a portfolio.
    func cancelAll(userID: Int, portfolioID: Int?) async throws -> CanceledOrders {
        guard let portfolio = try await trading.portfolio(userID: userID, id: portfolioID, trading: true) else {
            throw try await trading.portfolio(userID: userID, id: portfolioID) == nil ? TradingError.noSuchPortfolio : TradingError.notATrader
        }
        let closed = try await store.close(.portfolio(id: portfolio.id), as: .canceled)
        return CanceledOrders(canceled: try await store.orders(ids: closed).map(Order.init))
    }
}
