import Foundation
import Logging
import Postgres

/// Each market day's close for the league portfolios whose rules lend, charge interest or
/// borrow fees, or keep a maintenance margin. `margin_close` (SQL) charges and checks each
/// portfolio once per day, whatever the number of server processes; a call still standing
/// at the next close is met by forced sales here, largest position first, each an
/// ordinary fill (`TradingRules.fill`, the fill statement) with source `liquidation`.
/// Run by the periodic chores every `ORDER_SWEEP_SECONDS`; the close of a market day is
/// its session's close (`MarketHours.closing`: 16:00 in the market's zone where a session
/// does not end that day).
struct MarginCloses: Sendable {
    let pool: PostgresConnectionPool
    let trading: TradingStore
    let rules: TradingRulesBook
    let quotes: any QuoteProvider
    let hours: MarketHours
    let now: @Sendable () -> Date
    let logger: Logger

    /// How long a process may take over a call's forced sales before another may.
    static let lease = 60

    /// The latest market day whose close has passed at `moment`, with that close.
    func lastClose(at moment: Date) -> (day: String, at: Date)? {
        let tomorrow = hours.day(of: moment.addingTimeInterval(86_400))
        for day in hours.tradingDays(count: 2, before: tomorrow).reversed() {
            if let close = hours.closing(of: day), close <= moment { return (day, close) }
        }
        return nil
    }

    /// Closes the latest closed market day of every portfolio due, then sells for the calls
    /// that day's close found still standing.
    /// A scenario league's days close on its own clock, as its market moves on
    /// (`league_market_advance`); the calls of its latest close are sold here.
    func run() async throws {
        if let close = lastClose(at: now()) {
            let due = try await pool.query(
                """
                SELECT p.id FROM portfolios p JOIN leagues l ON l.id = p.league_id
                WHERE p.archived_at IS NULL AND league_running(l, \(close.at)) AND margin_league(l)
                  AND NOT EXISTS (SELECT 1 FROM league_markets lm WHERE lm.league_id = l.id)
                  AND NOT EXISTS (SELECT 1 FROM margin_closes m WHERE m.portfolio_id = p.id AND m.day = \(close.day)::date)
                ORDER BY p.id
                """
            ).decodeColumn(Int.self)
            for portfolio in due {
                try await pool.execute("SELECT FROM margin_close(\(portfolio), \(close.day)::date, \(close.at))")
            }
            try await liquidate(day: close.day)
        }
        let leagueCloses = try await pool.query(
            """
            SELECT DISTINCT (m.bar_days[m.day - 1])::text FROM league_markets m JOIN leagues l ON l.id = m.league_id
            WHERE m.day > 1 AND margin_league(l) AND league_running(l, \(now()))
            """
        ).decodeColumn(String.self)
        for day in leagueCloses { try await liquidate(day: day) }
    }

    /// Takes over, for a lease, each call of `day`'s close that stood at the close before
    /// too, and sells until it is met.
    private func liquidate(day: String) async throws {
        let due = try await pool.query(
            """
            UPDATE margin_closes m SET liquidating_until = now() + make_interval(secs => \(Self.lease))
            FROM portfolios p
            WHERE p.id = m.portfolio_id AND m.day = \(day)::date AND m.called AND m.liquidated_at IS NULL
              AND (m.liquidating_until IS NULL OR m.liquidating_until < now())
              AND (SELECT before.called FROM margin_closes before
                   WHERE before.portfolio_id = m.portfolio_id AND before.day < m.day ORDER BY before.day DESC LIMIT 1)
            RETURNING m.portfolio_id, p.user_id
            """
        ).decode((Int, Int).self)
        for (portfolio, holder) in due {
            try await sellUntilMet(portfolio: portfolio, holder: holder, day: day)
        }
    }

    /// Closes the portfolio's largest position (by value, at the price now) while its equity
    /// is below maintenance (`margin_standing`), then tells its holder what was sold.
    private func sellUntilMet(portfolio: Int, holder: Int, day: String) async throws {
        let rules = try await rules.rules(userID: holder, portfolioID: portfolio)
        var sold: [String] = []
        while true {
            guard let largest = try await pool.query(
                """
                SELECT v.symbol, v.quantity, c.price FROM margin_standing(\(portfolio)) s, holding_values v
                JOIN current_prices c ON c.symbol = v.symbol
                WHERE s.below AND v.portfolio_id = \(portfolio)
                ORDER BY abs(v.value) DESC, v.symbol LIMIT 1
                """
            ).first else { break }
            let (symbol, quantity, price) = try largest.decode((String, Int, Decimal).self)
            let side: TradeSide = quantity > 0 ? .sell : .buy
            let execution: TradingStore.Execution
            do {
                guard let order = try await rules.fill(
                    side, quote: price, quotes: quotes, volumes: self.rules.volumes, userID: holder, portfolioID: portfolio,
                    symbol: symbol, quantity: abs(quantity), source: .liquidation
                ) else { break }
                execution = try await trading.execute(side, order)
            } catch let error as FxError {
                // No rate for the league's currency now: the next run sells, within the lease.
                logger.warning("a forced sale waits for an exchange rate", metadata: ["portfolio": "\(portfolio)", "error": "\(error)"])
                return
            }
            guard execution.outcome == .ok, let trade = execution.trade else {
                // A frozen or ended league, or a cover the portfolio cannot pay: the call stands.
                logger.warning("a forced sale was refused", metadata: ["portfolio": "\(portfolio)", "outcome": "\(execution.outcome)"])
                break
            }
            sold.append("\(side == .sell ? "sold" : "bought back") \(abs(quantity)) \(Symbol.shown(symbol)) at \(trade.price.moneyString)")
        }
        guard !sold.isEmpty else {
            // Met by the prices since the close: nothing to sell.
            try await pool.execute(
                "UPDATE margin_closes SET liquidated_at = now(), liquidating_until = NULL WHERE portfolio_id = \(portfolio) AND day = \(day)::date"
            )
            return
        }
        try await pool.execute(
            """
            WITH done AS (
                UPDATE margin_closes SET liquidated_at = now(), liquidating_until = NULL
                WHERE portfolio_id = \(portfolio) AND day = \(day)::date AND liquidated_at IS NULL
                RETURNING equity, required
            )
            SELECT notify(\(holder), 'Positions sold for a margin call in ' || l.name,
                          'Your equity stayed below the ' || l.maintenance_percent || '% maintenance for a second close ('
                          || money_text(done.equity, p.cash_currency) || ' against ' || money_text(done.required, p.cash_currency)
                          || '), so the largest positions were closed: ' || \(sold.joined(separator: "; ")) || '. Equity now '
                          || money_text(s.equity, p.cash_currency) || ', maintenance ' || money_text(s.required, p.cash_currency) || '.',
                          'liquidated')
            FROM done, portfolios p JOIN leagues l ON l.id = p.league_id, margin_standing(p.id) s
            WHERE p.id = \(portfolio)
            """
        )
    }
}
