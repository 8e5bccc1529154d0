import Foundation
import Logging
import Postgres

/// Fills the open orders the price crosses. It runs whenever prices are stored (a
/// simulated tick, a replay day, admin quotes, an http fetch), when an order is placed,
/// and on a sweep every `ORDER_SWEEP_SECONDS` (a chore of the periodic service), which
/// also expires day orders and catches whatever a stopped process left. Each fill claims
/// its order with `FOR UPDATE SKIP LOCKED`, so with several server processes matching at
/// once every order fills exactly once.
struct OrderMatcher: Sendable {
    let orders: OrderStore
    let trading: TradingStore
    let hours: MarketHours
    let rules: TradingRulesBook
    /// For the rate now, where a portfolio holds another currency.
    let quotes: any QuoteProvider
    let logger: Logger
    let now: @Sendable () -> Date
    /// Fills running at once: enough to keep a few connections busy, few enough to leave
    /// the pool to requests.
    static let concurrentFills = 4

    /// Expires what is due, cancels the orders of portfolios taken away and those API keys
    /// placed where a league now forbids keys, then matches every open order.
    func sweep() async throws {
        while try await !orders.close(.due(at: now()), as: .expired).isEmpty {}
        while try await !orders.close(.leagueDayEnded, as: .expired, reason: "The league day ended.").isEmpty {}
        while try await !orders.close(.ofClosedPortfolios, as: .canceled, reason: "The portfolio was closed.").isEmpty {}
        while try await !orders.close(.placedByForbiddenKeys(leagueID: nil), as: .canceled, reason: OrderStore.botsForbiddenReason).isEmpty {}
        try await match()
    }

    /// Fills the open orders (of these symbols, or this one order) that the current prices
    /// cross, while the market is open; a scenario league's orders at any time (its market
    /// keeps the league's clock). Returns how many filled.
    @discardableResult
    func match(symbols: [String]? = nil, orderID: Int? = nil) async throws -> Int {
        let moment = now()
        let candidates = try await orders.fillable(
            symbols: symbols, orderID: orderID, at: moment, leaguesOnly: !hours.clock(at: moment).isOpen
        )
        guard !candidates.isEmpty else { return 0 }
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            var filled = 0
            var next = candidates.makeIterator()
            for _ in 0..<Self.concurrentFills {
                guard let candidate = next.next() else { break }
                group.addTask { try await self.fill(candidate) }
            }
            while let done = try await group.next() {
                if done { filled += 1 }
                if let candidate = next.next() { group.addTask { try await self.fill(candidate) } }
            }
            return filled
        }
    }

    /// Fills one order at the price that crossed it, or closes it when the fill is
    /// refused: rejected when the cash or shares no longer suffice, expired when its
    /// league has ended, cancelled when its portfolio is gone. An order another process
    /// is filling or closing right now is skipped.
    private func fill(_ candidate: OrderStore.Fillable) async throws -> Bool {
        let rules = try await rules.rules(userID: candidate.userID, portfolioID: candidate.portfolioID)
        var order: TradeOrder
        do {
            // A limit the last price crossed but the league's quote (its spread and impact) has
            // not, or a volume cap with nothing left today: it waits. Under a cap it may fill in part.
            guard let priced = try await rules.fill(
                candidate.side, quote: candidate.price, quotes: quotes, volumes: self.rules.volumes, userID: candidate.userID,
                portfolioID: candidate.portfolioID, symbol: candidate.symbol, quantity: candidate.quantity,
                limit: candidate.limitPrice, source: .order, fill: .resting(id: candidate.id)
            ), !(priced.partial && (candidate.siblingID != nil || candidate.opensLegs)) else { return false }
            // (An entry with legs, or a leg with a sibling, fills whole: it waits for a day the cap allows it.)
            order = priced
            order.sibling = candidate.siblingID
            order.opensLegs = candidate.opensLegs
        } catch let error as FxError {
            // No rate for the portfolio's currency now: the order waits for one.
            logger.warning("order left open without an exchange rate", metadata: ["order": "\(candidate.id)", "error": "\(error)"])
            return false
        } catch TradingError.priceTooLow {
            return try await close(candidate, as: .rejected, reason: "The price fell below the league's minimum for buying.")
        }
        let closing: (status: OrderStatus, reason: String)
        do {
            try await rules.checkFill(candidate.side, order, in: trading)
            switch try await trading.execute(candidate.side, order).outcome {
            case .ok: return true
            // Frozen by the league's host after the order was picked: it waits.
            // (A resting order's journal note was asked for when it was placed.)
            case .notOpen, .frozen, .noteRequired: return false
            case .insufficientFunds: closing = (.rejected, "There was not enough cash for the fill.")
            case .insufficientShares: closing = (.rejected, "The portfolio no longer holds the shares.")
            case .insufficientMargin: closing = (.rejected, "The portfolio's equity would not cover the short positions' margin.")
            case .priceTooLow: closing = (.rejected, "The price fell below the league's minimum for selling short.")
            case .closed: closing = (.expired, "The league is not running.")
            case .notFound, .notATrader: closing = (.canceled, "The portfolio was closed.")
            // Placed through an API key on a portfolio whose league has come to forbid keys.
            case .botsForbidden: closing = (.canceled, OrderStore.botsForbiddenReason)
            }
        } catch TradingError.volumeCap {
            // Other fills of the portfolio took what the cap left today: the rest waits.
            return false
        } catch TradingError.proceedsBelowFee {
            closing = (.rejected, "The sale's proceeds would not cover its fee.")
        } catch TradingError.positionLimit(let percent) {
            closing = (.rejected, "The fill would make \(order.symbol) more than \(percent)% of the portfolio's net worth.")
        }
        return try await close(candidate, as: closing.status, reason: closing.reason)
    }

    /// Closes an order the matcher could not fill; returns false (nothing filled).
    private func close(_ candidate: OrderStore.Fillable, as status: OrderStatus, reason: String) async throws -> Bool {
        try await orders.close(.one(id: candidate.id), as: status, reason: reason)
        logger.info("order closed instead of filled", metadata: ["order": "\(candidate.id)", "reason": "\(reason)"])
        return false
    }
}
