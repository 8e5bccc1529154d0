import Foundation
import Postgres

/// Portfolios, holdings, trades and cash movements.
struct TradingStore: Sendable {
    let pool: PostgresConnectionPool
    /// Where bots' polls of their valuations go (`valuations(…, polled: true)`).
    var reads: StaleReads? = nil

    /// What one trade statement reports.
    struct Execution: Sendable {
        let outcome: TradeOutcome
        let trade: TradeRecord?
        let cash: Decimal?
        let position: Int?
        /// The filled order's id (not remembered under idempotency keys).
        var orderID: Int? = nil
    }

    struct TradeRecord: Sendable {
        let id: Int
        let portfolioID: Int
        let symbol: String
        let side: TradeSide
        let quantity: Int
        let price: Decimal
        let amount: Decimal
        let fee: Decimal
        let createdAt: Date
        /// The rate of a fill in another currency than dollars.
        var fxRate: Decimal?
        /// The trader's journal note.
        var note: String?
        /// Who placed it.
        var placedBy: Int? = nil
        /// What made it, and the spread and impact in its price.
        var source = TradeSource.trade
        var spread: Decimal = 0
        var impact: Decimal = 0

        var pricing: FillPricing { FillPricing(side: side, price: price, spread: spread, impact: impact) }
    }

    /// A `trades` row, by column name.
    private static func tradeRecord(_ row: PostgresRow) throws -> TradeRecord {
        TradeRecord(
            id: try row.decode(Int.self, column: "id"), portfolioID: try row.decode(Int.self, column: "portfolio_id"),
            symbol: try row.decode(String.self, column: "symbol"), side: try row.decode(TradeSide.self, column: "side"),
            quantity: try row.decode(Int.self, column: "quantity"), price: try row.decode(Decimal.self, column: "price"),
            amount: try row.decode(Decimal.self, column: "amount"), fee: try row.decode(Decimal.self, column: "fee"),
            createdAt: try row.decode(Date.self, column: "created_at"), fxRate: try row.decode(Decimal?.self, column: "fx_rate"),
            note: try row.decode(String?.self, column: "note"), placedBy: try row.decode(Int?.self, column: "placed_by"),
            source: try row.decode(TradeSource.self, column: "source"), spread: try row.decode(Decimal.self, column: "spread"),
            impact: try row.decode(Decimal.self, column: "impact")
        )
    }

    /// Runs the trade statement. A repeat of an idempotency key that was being used at the
    /// same moment (its row was inserted by the other request first) throws
    /// `TradingError.idempotencyKeyInFlight`.
    /// An order naming a team's portfolio finds none of the placer's; it runs again as the
    /// team's account when they trade for it (`PortfolioAccess`), and a viewer's is
    /// `not_a_trader`: one more query for a team's trade, none for anyone's own.
    func execute(_ side: TradeSide, _ order: TradeOrder) async throws -> Execution {
        let execution = try await Self.execution(side, order) { try await pool.queryRetryingTransientFailures($0) }
        guard execution.outcome == .notFound, let portfolioID = order.portfolioID, order.placedBy == nil,
              let seat = try await PortfolioAccess.seat(userID: order.userID, portfolioID: portfolioID, run: pool.query)
        else { return execution }
        guard seat.trader else { return Execution(outcome: .notATrader, trade: nil, cash: nil, position: nil) }
        return try await Self.execution(side, order.acting(as: seat.account)) { try await pool.queryRetryingTransientFailures($0) }
    }

    /// Runs the trade statement through `run` and reads what it reports.
    private static func execution(
        _ side: TradeSide, _ order: TradeOrder, _ run: (PostgresQuery) async throws -> PostgresRows
    ) async throws -> Execution {
        let rows: PostgresRows
        do {
            rows = try await run(TradeStatement.query(side, order))
        } catch let error as PostgresError where error.code == .uniqueViolation
            && (error.constraint == "idempotency_keys_pkey" || error.constraint == "orders_client_order_id") {
            throw TradingError.idempotencyKeyInFlight
        } catch let error as PostgresError where error.constraint == "volume_fills_within_cap" {
            // Fills at once passed the day's cap together: this one is refused with what is left.
            guard let cap = order.volumeCap, let portfolioID = order.portfolioID else { throw error }
            let filled = try await DailyVolumes.filled(portfolioID: portfolioID, symbol: order.symbol, day: cap.day, run: run)
            throw TradingError.volumeCap(available: max(cap.shares - filled, 0))
        }
        let (outcome, tradeID, portfolioID, createdAt, cash, position, orderID) =
            try rows[0].decode((TradeOutcome, Int?, Int?, Date?, Decimal?, Int?, Int?).self)
        let trade = tradeID.map { id in
            TradeRecord(
                id: id, portfolioID: portfolioID!, symbol: order.symbol, side: side, quantity: order.quantity,
                price: order.price, amount: order.amount, fee: order.fee, createdAt: createdAt!, fxRate: order.fxRate,
                note: order.note, placedBy: { if case .resting = order.fill { return nil } else { return order.placer } }(),
                source: order.source, spread: order.spread, impact: order.impact
            )
        }
        return Execution(outcome: outcome, trade: trade, cash: cash, position: position, orderID: orderID)
    }

    /// The close of `symbol` on `day` (`YYYY-MM-DD`), for a back-dated fill.
    func close(symbol: String, day: String) async throws -> Decimal? {
        try await pool.query("SELECT close FROM daily_bars WHERE symbol = \(symbol) AND day = \(day)::date")
            .decodeColumn(Decimal.self).first
    }

    /// A back-dated fill at the close of `day` (`closing`), in one transaction with the
    /// portfolio locked: only in a practice portfolio of the user's, and not before its
    /// latest entry (`TradingError.outOfOrder`). The fill statement moves the position by
    /// what the shares are today (`backdated_shares`, splits since `day` up to the market's
    /// day `through`) and spends none of the income received after the close; then
    /// `catch_up_fill` pays the splits' and dividends' cash since, dated their ex-dates.
    func executeBackdated(
        _ side: TradeSide, _ order: TradeOrder, day: String, closing: Date, through: String, zone: String
    ) async throws -> Execution {
        try await pool.withTransaction { session in
            try await Self.executeBackdated(side, order, day: day, closing: closing, through: through, zone: zone, in: session)
        }
    }

    /// `executeBackdated` in the caller's transaction (an import fills many in one).
    static func executeBackdated(
        _ side: TradeSide, _ order: TradeOrder, day: String, closing: Date, through: String, zone: String,
        in session: PostgresSession
    ) async throws -> Execution {
        guard let portfolioID = order.portfolioID else { throw TradingError.backdatingNotAllowed }
        let signed = side == .buy ? order.quantity : -order.quantity
        let rows = try await session.query(
            """
            SELECT p.kind = \(PortfolioKind.practice), coalesce(market_day(latest_entry(p.id), \(zone)) <= \(day)::date, true),
                   backdated_shares(p.id, \(order.symbol), \(day)::date, \(through)::date, \(signed), \(zone)), income_after(p.id, \(closing))
            FROM portfolios p WHERE p.id = \(portfolioID) AND p.user_id = \(order.userID) AND p.archived_at IS NULL
            FOR UPDATE
            """
        ).decode((Bool, Bool, Int, Decimal).self)
        guard let (practice, inOrder, shares, incomeAfter) = rows.first else { throw TradingError.noSuchPortfolio }
        guard practice else { throw TradingError.backdatingNotAllowed }
        guard inOrder else { throw TradingError.outOfOrder }
        let dated = order.backdated(.init(at: closing, shares: abs(shares), incomeAfter: incomeAfter))
        let execution = try await Self.execution(side, dated) { try await session.query($0) }
        guard execution.outcome == .ok, let trade = execution.trade else { return execution }
        let income = try await session.query("SELECT catch_up_fill(\(trade.id), \(through)::date, \(zone))")
            .decodeColumn(Decimal.self).first ?? 0
        return Execution(outcome: execution.outcome, trade: trade, cash: execution.cash.map { $0 + income },
                         position: execution.position, orderID: execution.orderID)
    }

    /// The symbols among `symbols` that name no instrument.
    func unknownSymbols(_ symbols: [String]) async throws -> Set<String> {
        Set(try await pool.query(
            "SELECT s FROM unnest(\(symbols)::text[]) s WHERE NOT EXISTS (SELECT 1 FROM instruments i WHERE i.symbol = s)"
        ).decodeColumn(String.self))
    }

    /// The outcome first remembered under this key, with its request hash.
    func remembered(userID: Int, key: String) async throws -> (requestHash: String, execution: Execution)? {
        let rows = try await pool.query(
            """
            SELECT k.request_hash, k.outcome, k.cash, k.position,
                   t.id, t.portfolio_id, t.symbol, t.side, t.quantity, t.price, t.amount, t.fee, t.created_at, t.fx_rate, t.note, t.placed_by,
                   t.source, t.spread, t.impact
            FROM idempotency_keys k LEFT JOIN trades t ON t.id = k.trade_id
            WHERE k.user_id = \(userID) AND k.key = \(key)
            """
        )
        guard let row = rows.first else { return nil }
        let (hash, outcome, cash, position) = try (
            row.decode(String.self, column: "request_hash"), row.decode(TradeOutcome.self, column: "outcome"),
            row.decode(Decimal?.self, column: "cash"), row.decode(Int?.self, column: "position")
        )
        let trade = try row.decode(Int?.self, column: "id") == nil ? nil : Self.tradeRecord(row)
        return (hash, Execution(outcome: outcome, trade: trade, cash: cash, position: position))
    }

    /// Forgets idempotency keys older than two days (the API promises at least one); run by
    /// `HousekeepingService`.
    func forgetOldKeys() async throws {
        try await pool.execute("DELETE FROM idempotency_keys WHERE created_at < now() - interval '2 days'")
    }

    // MARK: Reading

    struct PortfolioRecord: Sendable {
        let id: Int
        let leagueID: Int?
        let name: String
        let cash: Decimal
    }

    /// Which of a user's portfolios to read: all of them, or one (nil: the personal one).
    enum PortfolioScope: Sendable {
        case all
        case one(Int?)
    }

    /// The user's portfolios in `scope`, valued now through `holding_values` (long and
    /// short positions), read in one statement so that cash and holdings are of the same
    /// moment even while a fill, a split or a dividend commits. A holding whose price has
    /// no exchange rate into its portfolio's currency is `FxError.noRate`.
    /// `dayChange` reads each holding's previous close too (what the portfolio page and
    /// `/v2` show), which costs a lookup per holding that other readers skip.
    /// `polled`: a bot's poll, read from a replica that holds every acknowledged commit when
    /// there is one (`StaleReads`).
    func valuations(userID: Int, _ scope: PortfolioScope, dayChange: Bool, polled: Bool = false) async throws -> [PortfolioValuation] {
        let polls = reads ?? StaleReads(pool: pool), pool = pool
        let run: @Sendable (PostgresQuery) async throws -> PostgresRows = { query in
            polled ? try await polls.query(query, everyCommit: true) : try await pool.query(query)
        }
        switch scope {
        case .all:
            return try await valuations(holder: userID, all: true, id: nil, dayChange: dayChange, run: run)
        case .one(let id):
            return try await PortfolioAccess.resolving(userID: userID, portfolioID: id, run: run) { holder in
                let found = try await valuations(holder: holder, all: false, id: id, dayChange: dayChange, run: run)
                return found.isEmpty ? nil : found
            } ?? []
        }
    }

    /// The valuations of `holder`'s portfolios (with `all`, of every one the holder sees).
    private func valuations(
        holder: Int, all: Bool, id: Int?, dayChange: Bool, run: @Sendable (PostgresQuery) async throws -> PostgresRows
    ) async throws -> [PortfolioValuation] {
        let userID = holder
        let rows = try await run(
            """
            SELECT p.id, p.league_id, p.name, p.kind, p.base_currency, p.cash_currency, p.cash, p.reserved_cash,
                   buying_power(p.cash, p.reserved_cash) AS buying_power, v.symbol, i.name AS instrument, i.uuid::text AS asset_uuid,
                   v.quantity, v.cost_basis,
                   v.average_cost, v.price, v.value,
                   \(unescaped: dayChange ? "v.previous_price, v.day_change" : "NULL::numeric AS previous_price, 0::numeric AS day_change"),
                   coalesce(sum(v.value) OVER w, 0) AS holdings_value, net_worth(p.cash, sum(v.value) OVER w) AS net_worth
            FROM portfolios p
            LEFT JOIN holding_values v ON v.portfolio_id = p.id
            LEFT JOIN instruments i ON i.symbol = v.symbol
            WHERE \(all ? PortfolioAccess.listed("p.user_id", userID: userID) : "p.user_id = \(holder)") AND p.archived_at IS NULL
              AND (\(all)::bool OR portfolio_named(p.kind, p.id, \(id)::int8))
            WINDOW w AS (PARTITION BY p.id)
            ORDER BY p.league_id NULLS FIRST, p.kind, p.id, v.symbol
            """
        )
        var portfolios: [(id: Int, row: PostgresRow, holdings: [PortfolioValuation.Holding])] = []
        for row in rows {
            let id = try row.decode(Int.self, column: "id")
            if portfolios.last?.id != id { portfolios.append((id, row, [])) }
            guard let symbol = try row.decode(String?.self, column: "symbol") else { continue }
            let currency = try row.decode(String.self, column: "cash_currency")
            guard let price = try row.decode(Decimal?.self, column: "price") else {
                try PortfolioValuation.requirePriced(currency: currency, unpriced: true)
                continue
            }
            portfolios[portfolios.count - 1].holdings.append(PortfolioValuation.Holding(
                symbol: symbol, name: try row.decode(String.self, column: "instrument"),
                assetID: try row.decode(String.self, column: "asset_uuid"),
                quantity: try row.decode(Int.self, column: "quantity"), costBasis: try row.decode(Decimal.self, column: "cost_basis"),
                averageCost: try row.decode(Decimal.self, column: "average_cost"), price: price, previousPrice: dayChange ? try row.decode(Decimal?.self, column: "previous_price") ?? price : nil,
                value: try row.decode(Decimal.self, column: "value"), dayChange: try row.decode(Decimal.self, column: "day_change")
            ))
        }
        return try portfolios.map { id, row, holdings in
            PortfolioValuation(
                id: id, leagueID: try row.decode(Int?.self, column: "league_id"),
                name: try row.decode(String.self, column: "name"), kind: try row.decode(PortfolioKind.self, column: "kind"),
                baseCurrency: try row.decode(String.self, column: "base_currency"),
                currency: try row.decode(String.self, column: "cash_currency"), cash: try row.decode(Decimal.self, column: "cash"),
                reserved: try row.decode(Decimal.self, column: "reserved_cash"),
                buyingPower: try row.decode(Decimal.self, column: "buying_power"), holdings: holdings,
                holdingsValue: try row.decode(Decimal.self, column: "holdings_value"),
                netWorth: try row.decode(Decimal.self, column: "net_worth")
            )
        }
    }

    /// The user's portfolio by id, or the personal one for nil; nil when not theirs (one
    /// they see, or with `trading` one they trade: `PortfolioAccess`).
    func portfolio(userID: Int, id: Int?, trading: Bool = false) async throws -> PortfolioRecord? {
        try await PortfolioAccess.resolving(userID: userID, portfolioID: id, trading: trading, run: pool.query) { holder in
            try await pool.query(
                """
                SELECT id, league_id, name, cash FROM portfolios
                WHERE user_id = \(holder) AND archived_at IS NULL
                  AND portfolio_named(kind, id, \(id)::int8)
                """
            ).decode((Int, Int?, String, Decimal).self).first.map { PortfolioRecord(id: $0.0, leagueID: $0.1, name: $0.2, cash: $0.3) }
        }
    }

    /// What the position in `symbol` and the whole portfolio (the user's, or personal) are
    /// worth at current prices; nil when there is no such portfolio.
    func exposure(userID: Int, portfolioID: Int?, symbol: String) async throws -> (position: Decimal, netWorth: Decimal)? {
        try await PortfolioAccess.resolving(userID: userID, portfolioID: portfolioID, trading: true, run: pool.query) { holder in
            try await pool.query(
                """
                SELECT coalesce(sum(v.value) FILTER (WHERE v.symbol = \(symbol)), 0), net_worth(p.cash, sum(v.value))
                FROM portfolios p LEFT JOIN holding_values v ON v.portfolio_id = p.id
                WHERE p.user_id = \(holder) AND p.archived_at IS NULL
                  AND portfolio_named(p.kind, p.id, \(portfolioID)::int8)
                GROUP BY p.id, p.cash
                """
            ).decode((Decimal, Decimal).self).first.map { (position: $0.0, netWorth: $0.1) }
        }
    }

    /// Trades of one portfolio, newest first, with ids below `before`.
    func trades(portfolioID: Int, symbol: String?, before: Int?, limit: Int) async throws -> [TradeRecord] {
        let rows = try await pool.query(
            """
            SELECT id, portfolio_id, symbol, side, quantity, price, amount, fee, created_at, fx_rate, note, placed_by,
                   source, spread, impact FROM trades
            WHERE portfolio_id = \(portfolioID)
              AND (\(symbol)::text IS NULL OR symbol = \(symbol)::text)
              AND (\(before)::int8 IS NULL OR id < \(before)::int8)
            ORDER BY id DESC LIMIT \(limit)
            """
        )
        return try rows.map(Self.tradeRecord)
    }

    struct CashMovementRecord: Sendable {
        let id: Int
        let portfolioID: Int
        let kind: CashMovementKind
        let amount: Decimal
        let note: String
        let createdAt: Date
    }

    func cashMovements(portfolioID: Int, before: Int?, limit: Int) async throws -> [CashMovementRecord] {
        let rows = try await pool.query(
            """
            SELECT id, portfolio_id, kind, amount, note, created_at FROM cash_movements
            WHERE portfolio_id = \(portfolioID) AND (\(before)::int8 IS NULL OR id < \(before)::int8)
            ORDER BY id DESC LIMIT \(limit)
            """
        )
        return try rows.decode((Int, Int, CashMovementKind, Decimal, String, Date).self).map {
            CashMovementRecord(id: $0.0, portfolioID: $0.1, kind: $0.2, amount: $0.3, note: $0.4, createdAt: $0.5)
        }
    }

    struct ActivityRecord: Sendable {
        /// Where the next page starts: the activity's time (to the microsecond), source and id.
        let cursor: String
        let id: String
        let type: String
        let symbol: String?
        let side: TradeSide?
        let quantity: Int?
        let price: Decimal?
        let amount: Decimal?
        let fee: Decimal?
        let note: String?
        let at: Date
        /// A fill's: what made it, and the spread and impact in its price.
        let madeBy: TradeSource?
        let spread: Decimal?
        let impact: Decimal?

        var pricing: FillPricing? { FillPricing(activity: side, price: price, spread: spread, impact: impact) }
    }

    /// A portfolio's activities (the `activities` view), newest first, before `cursor`.
    func activities(portfolioID: Int, before cursor: (at: String, source: Int, id: Int)?, limit: Int) async throws -> [ActivityRecord] {
        let rows = try await pool.query(
            """
            SELECT activity_cursor(at, source, id) AS cursor,
                   CASE source WHEN 1 THEN 'fill-' WHEN 2 THEN 'cash-' ELSE 'split-' END || id AS activity_id,
                   type, symbol, side, quantity, price, amount, fee, note, at, made_by, spread, impact
            FROM activities
            WHERE portfolio_id = \(portfolioID)
              AND (\(cursor?.at)::timestamptz IS NULL
                   OR (at, source, id) < (\(cursor?.at)::timestamptz, \(cursor?.source)::int, \(cursor?.id)::int8))
            ORDER BY at DESC, source DESC, id DESC LIMIT \(limit)
            """
        )
        return try rows.map { row in
            ActivityRecord(
                cursor: try row.decode(String.self, column: "cursor"), id: try row.decode(String.self, column: "activity_id"),
                type: try row.decode(String.self, column: "type"), symbol: try row.decode(String?.self, column: "symbol"),
                side: try row.decode(TradeSide?.self, column: "side"), quantity: try row.decode(Int?.self, column: "quantity"),
                price: try row.decode(Decimal?.self, column: "price"), amount: try row.decode(Decimal?.self, column: "amount"),
                fee: try row.decode(Decimal?.self, column: "fee"), note: try row.decode(String?.self, column: "note"),
                at: try row.decode(Date.self, column: "at"), madeBy: try row.decode(TradeSource?.self, column: "made_by"),
                spread: try row.decode(Decimal?.self, column: "spread"), impact: try row.decode(Decimal?.self, column: "impact")
            )
        }
    }
}
