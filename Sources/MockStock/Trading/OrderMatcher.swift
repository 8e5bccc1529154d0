import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// Fills the open orders the price crosses. It runs whenever prices are stored (a
/// simulated tick, a replay day, admin quotes, an http fetch), when an order is placed,
/// and on a sweep every `interval`, which also expires day orders and catches whatever a
/// stopped process left. Each fill claims its order with `FOR UPDATE SKIP LOCKED`, so
/// with several server processes matching at once every order fills exactly once.
final class OrderMatcher: Service, Sendable {
    let orders: OrderStore
    let trading: TradingStore
    let hours: MarketHours
    let rules: TradingRulesBook
    let interval: Duration
    let logger: Logger
    /// Opened when start-up (migrations) is done: the sweep needs the schema.
    let started: StartSignal
    let now: @Sendable () -> Date
    /// Fills running at once: enough to keep a few connections busy, few enough to leave
    /// the pool to requests.
    static let concurrentFills = 4

    init(orders: OrderStore, trading: TradingStore, hours: MarketHours, rules: TradingRulesBook, interval: Duration,
         logger: Logger, started: StartSignal, now: @escaping @Sendable () -> Date) {
        self.orders = orders
        self.trading = trading
        self.hours = hours
        self.rules = rules
        self.interval = interval
        self.logger = logger
        self.started = started
        self.now = now
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.started.wait() }
        await repeatUntilShutdown(every: interval, logger: logger, task: "order sweep") {
            try await self.sweep()
        }
    }

    /// Expires what is due, cancels the orders of portfolios taken away, then matches
    /// every open order.
    func sweep() async throws {
        while try await !orders.close(.due(at: now()), as: .expired).isEmpty {}
        while try await !orders.close(.ofClosedPortfolios, as: .canceled, reason: "The portfolio was closed.").isEmpty {}
        try await match()
    }

    /// Matches after prices were stored; a failure is logged and left to the next sweep.
    func pricesStored(_ symbols: [String]?) async {
        do {
            try await match(symbols: symbols)
        } catch {
            logger.warning("matching after new prices failed", metadata: ["error": "\(error)"])
        }
    }

    /// Fills the open orders (of these symbols, or this one order) that the current prices
    /// cross, while the market is open. Returns how many filled.
    @discardableResult
    func match(symbols: [String]? = nil, orderID: Int? = nil) async throws -> Int {
        guard hours.clock(at: now()).isOpen else { return 0 }
        let candidates = try await orders.fillable(symbols: symbols, orderID: orderID)
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
        let fee = rules.commission.fee(for: candidate.price * Decimal(candidate.quantity))
        let order = TradeOrder(
            userID: candidate.userID, portfolioID: candidate.portfolioID, symbol: candidate.symbol,
            quantity: candidate.quantity, price: candidate.price, fee: fee, fill: .resting(id: candidate.id),
            shortMarginPercent: rules.shortSellingMargin
        )
        if candidate.side == .sell && order.amount < fee {
            try await orders.close(.one(id: candidate.id), as: .rejected, reason: "The sale's proceeds would not cover its fee.")
            return false
        }
        if candidate.side == .buy {
            do {
                try await rules.checkPosition(buying: order.amount, fee: fee, of: order.symbol, userID: order.userID,
                                              portfolioID: order.portfolioID, in: trading)
            } catch TradingError.positionLimit(let percent) {
                try await orders.close(.one(id: candidate.id), as: .rejected,
                                       reason: "The fill would make \(order.symbol) more than \(percent)% of the portfolio's net worth.")
                return false
            }
        }
        let execution = try await trading.execute(candidate.side, order)
        switch execution.outcome {
        case .ok: return true
        case .notOpen: return false
        case .insufficientFunds:
            try await orders.close(.one(id: candidate.id), as: .rejected, reason: "There was not enough cash for the fill.")
        case .insufficientShares:
            try await orders.close(.one(id: candidate.id), as: .rejected, reason: "The portfolio no longer holds the shares.")
        case .insufficientMargin:
            try await orders.close(.one(id: candidate.id), as: .rejected,
                                   reason: "The portfolio's equity would not cover the short positions' margin.")
        case .closed:
            try await orders.close(.one(id: candidate.id), as: .expired, reason: "The league is not running.")
        case .notFound:
            try await orders.close(.one(id: candidate.id), as: .canceled, reason: "The portfolio was closed.")
        }
        logger.info("order closed instead of filled", metadata: ["order": "\(candidate.id)", "outcome": "\(execution.outcome.rawValue)"])
        return false
    }
}
