import Foundation

/// Back-dated trades in practice portfolios (`"at": "YYYY-MM-DD"` on a buy, a sale or a
/// market order), for replaying "what if I had bought then": filled at that day's close,
/// in date order (nothing before the portfolio's latest entry), and caught up with the
/// splits and dividends since (`sql/functions/catch_up_fill.sql`).
struct BackdatedTrades: Sendable {
    let store: TradingStore
    let clock: MarketClock

    /// Checks the form of `at` before anything is read.
    static func check(_ at: String?) throws {
        guard let at else { return }
        guard CalendarDay.isValid(at), at >= PracticePortfolios.earliestDay else {
            throw InvalidInput("at must be a day (YYYY-MM-DD) from \(PracticePortfolios.earliestDay) to yesterday.")
        }
    }

    /// Fills at the close of `day`; `order` builds the order at that price under the
    /// portfolio's rules (and may refuse it).
    func fill(
        _ side: TradeSide, symbol: String, on day: String, order: (Decimal) async throws -> TradeOrder
    ) async throws -> TradingStore.Execution {
        try Self.check(day)
        let through = try await clock.marketDay()
        guard day < through else {
            throw InvalidInput("at must be a day before the market's day (\(through)); trade at today's price without at.")
        }
        guard let close = try await store.close(symbol: symbol, day: day), let closing = clock.hours.closing(of: day) else {
            throw TradingError.noClose(symbol: symbol, day: day)
        }
        return try await store.executeBackdated(
            side, try await order(close), day: day, closing: closing, through: through, zone: clock.zone
        )
    }

    /// Imports a practice portfolio's trades from CSV (`TradeImport`, every bad line told):
    /// each at its own price and fee, dated the close of its day, all in one transaction
    /// or none; a refused trade is told with its line (`ErrorAtLine`). Returns how many
    /// were made.
    func importTrades(csv: String, userID: Int, portfolioID: Int, idempotency: (key: String, requestHash: String)? = nil) async throws -> Int {
        let through = try await clock.marketDay()
        let rows = try await TradeImport.rows(csv, before: through) { try await store.unknownSymbols($0) }
        let zone = clock.zone
        return try await store.pool.withTransaction { session in
            // Under an Idempotency-Key the import is made once: the key is taken in the same
            // transaction (a repeat waits for the first, then answers its count).
            if let idempotency {
                let taken = try await session.query(
                    """
                    INSERT INTO idempotency_keys (user_id, key, request_hash, outcome, position)
                    VALUES (\(userID), \(idempotency.key), \(idempotency.requestHash), 'imported', \(rows.count))
                    ON CONFLICT (user_id, key) DO NOTHING RETURNING true
                    """
                ).decodeColumn(Bool.self)
                if taken.isEmpty {
                    let earlier = try await session.query(
                        "SELECT request_hash, outcome, position FROM idempotency_keys WHERE user_id = \(userID) AND key = \(idempotency.key)"
                    ).decode((String, String, Int?).self)
                    guard let (hash, outcome, count) = earlier.first, hash == idempotency.requestHash, outcome == "imported", let count else {
                        throw TradingError.idempotencyKeyReused
                    }
                    return count
                }
            }
            for row in rows {
                do {
                    guard let closing = clock.hours.closing(of: row.day) else { throw InvalidInput("date must be a real day.") }
                    let order = TradeOrder(userID: userID, portfolioID: portfolioID, symbol: row.symbol, quantity: row.quantity,
                                           price: row.price, fee: row.fee)
                    if row.side == .sell && order.amount < order.fee { throw TradingError.proceedsBelowFee }
                    try await TradingStore.executeBackdated(
                        row.side, order, day: row.day, closing: closing, through: through, zone: zone, in: session
                    ).outcome.check()
                } catch let error as TradingError where error == .noSuchPortfolio || error == .backdatingNotAllowed {
                    throw error
                } catch {
                    throw ErrorAtLine(line: row.line, error: error)
                }
            }
            return rows.count
        }
    }
}
