import Foundation
import Postgres

/// Portfolios, holdings, trades and cash movements.
struct TradingStore: Sendable {
    let pool: PostgresConnectionPool

    /// What one trade statement reports.
    struct Execution: Sendable {
        let outcome: TradeOutcome
        let trade: TradeRecord?
        let cash: Decimal?
        let position: Int?
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
    }

    /// Runs the trade statement. A repeat of an idempotency key that was being used at the
    /// same moment (its row was inserted by the other request first) throws
    /// `TradingError.idempotencyKeyInFlight`.
    func execute(_ side: TradeSide, _ order: TradeOrder) async throws -> Execution {
        let rows: PostgresRows
        do {
            rows = try await pool.queryRetryingTransientFailures(TradeStatement.query(side, order))
        } catch let error as PostgresError where error.code == .uniqueViolation && error.constraint == "idempotency_keys_pkey" {
            throw TradingError.idempotencyKeyInFlight
        }
        let (outcome, tradeID, portfolioID, createdAt, cash, position) =
            try rows[0].decode((TradeOutcome, Int?, Int?, Date?, Decimal?, Int?).self)
        let trade = tradeID.map { id in
            TradeRecord(
                id: id, portfolioID: portfolioID!, symbol: order.symbol, side: side, quantity: order.quantity,
                price: order.price, amount: order.amount, fee: order.fee, createdAt: createdAt!
            )
        }
        return Execution(outcome: outcome, trade: trade, cash: cash, position: position)
    }

    /// The outcome first remembered under this key, with its request hash.
    func remembered(userID: Int, key: String) async throws -> (requestHash: String, execution: Execution)? {
        let rows = try await pool.query(
            """
            SELECT k.request_hash, k.outcome, k.cash, k.position,
                   t.id, t.portfolio_id, t.symbol, t.side, t.quantity, t.price, t.amount, t.fee, t.created_at
            FROM idempotency_keys k LEFT JOIN trades t ON t.id = k.trade_id
            WHERE k.user_id = \(userID) AND k.key = \(key)
            """
        )
        guard let row = rows.first else { return nil }
        let (hash, outcome, cash, position) = try (
            row.decode(String.self, column: 0), row.decode(TradeOutcome.self, column: 1),
            row.decode(Decimal?.self, column: 2), row.decode(Int?.self, column: 3)
        )
        let trade = try row.decode(Int?.self, column: 4).map { id in
            TradeRecord(
                id: id, portfolioID: try row.decode(Int.self, column: 5), symbol: try row.decode(String.self, column: 6),
                side: try row.decode(TradeSide.self, column: 7), quantity: try row.decode(Int.self, column: 8),
                price: try row.decode(Decimal.self, column: 9), amount: try row.decode(Decimal.self, column: 10),
                fee: try row.decode(Decimal.self, column: 11), createdAt: try row.decode(Date.self, column: 12)
            )
        }
        return (hash, Execution(outcome: outcome, trade: trade, cash: cash, position: position))
    }

    /// Forgets idempotency keys older than two days (API.md promises at least one); run by
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

    struct HoldingRecord: Sendable {
        let symbol: String
        let name: String
        let quantity: Int
        let costBasis: Decimal
    }

    func portfolios(userID: Int) async throws -> [PortfolioRecord] {
        try await pool.query(
            """
            SELECT id, league_id, name, cash FROM portfolios
            WHERE user_id = \(userID) AND archived_at IS NULL ORDER BY league_id NULLS FIRST, id
            """
        ).decode((Int, Int?, String, Decimal).self).map { PortfolioRecord(id: $0.0, leagueID: $0.1, name: $0.2, cash: $0.3) }
    }

    /// The user's portfolio by id, or the personal one for nil; nil when not theirs.
    func portfolio(userID: Int, id: Int?) async throws -> PortfolioRecord? {
        try await pool.query(
            """
            SELECT id, league_id, name, cash FROM portfolios
            WHERE user_id = \(userID) AND archived_at IS NULL
              AND CASE WHEN \(id)::int8 IS NULL THEN league_id IS NULL ELSE id = \(id)::int8 END
            """
        ).decode((Int, Int?, String, Decimal).self).first.map { PortfolioRecord(id: $0.0, leagueID: $0.1, name: $0.2, cash: $0.3) }
    }

    /// Shares held (quantity above zero) in these portfolios, by portfolio.
    func holdings(portfolioIDs: [Int]) async throws -> [Int: [HoldingRecord]] {
        let rows = try await pool.query(
            """
            SELECT h.portfolio_id, h.symbol, i.name, h.quantity, h.cost_basis
            FROM holdings h JOIN instruments i ON i.symbol = h.symbol
            WHERE h.portfolio_id = ANY(\(portfolioIDs)) AND h.quantity > 0
            ORDER BY h.symbol
            """
        )
        var byPortfolio: [Int: [HoldingRecord]] = [:]
        for row in rows {
            let (portfolio, symbol, name, quantity, basis) = try row.decode((Int, String, String, Int, Decimal).self)
            byPortfolio[portfolio, default: []].append(HoldingRecord(symbol: symbol, name: name, quantity: quantity, costBasis: basis))
        }
        return byPortfolio
    }

    /// Trades of one portfolio, newest first, with ids below `before`.
    func trades(portfolioID: Int, symbol: String?, before: Int?, limit: Int) async throws -> [TradeRecord] {
        let rows = try await pool.query(
            """
            SELECT id, portfolio_id, symbol, side, quantity, price, amount, fee, created_at FROM trades
            WHERE portfolio_id = \(portfolioID)
              AND (\(symbol)::text IS NULL OR symbol = \(symbol)::text)
              AND (\(before)::int8 IS NULL OR id < \(before)::int8)
            ORDER BY id DESC LIMIT \(limit)
            """
        )
        return try rows.decode((Int, Int, String, TradeSide, Int, Decimal, Decimal, Decimal, Date).self).map {
            TradeRecord(id: $0.0, portfolioID: $0.1, symbol: $0.2, side: $0.3, quantity: $0.4, price: $0.5,
                        amount: $0.6, fee: $0.7, createdAt: $0.8)
        }
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
}

/// What a trade statement found: the trade was made, or why not.
enum TradeOutcome: String, PostgresCodable {
    case ok
    case notFound = "not_found"
    /// A league portfolio outside its league's run.
    case closed
    case insufficientFunds = "insufficient_funds"
    case insufficientShares = "insufficient_shares"
}

/// An order to trade at a known price, as the trade statement takes it.
public struct TradeOrder: Sendable {
    let userID: Int
    /// nil: the user's personal portfolio.
    let portfolioID: Int?
    let symbol: String
    let quantity: Int
    let price: Decimal
    let fee: Decimal
    /// The Idempotency-Key and a hash of the request, to remember the outcome under.
    let idempotency: (key: String, requestHash: String)?

    public init(userID: Int, portfolioID: Int?, symbol: String, quantity: Int, price: Decimal, fee: Decimal,
                idempotency: (key: String, requestHash: String)? = nil) {
        self.userID = userID
        self.portfolioID = portfolioID
        self.symbol = symbol
        self.quantity = quantity
        self.price = price
        self.fee = fee
        self.idempotency = idempotency
    }

    public var amount: Decimal { price * Decimal(quantity) }
}

/// The trade statements: one statement per trade, so it either happens whole or not at
/// all. Public so the benchmark renders the very same query for pgbench.
public enum TradeStatement {
    public static func query(_ side: TradeSide, _ order: TradeOrder) -> PostgresQuery {
        switch side {
        case .buy: buy(order)
        case .sell: sell(order)
        }
    }

    /// The statement as text for pgbench, trading a fixed `price` without fee: the user,
    /// quantity and symbol are pgbench's variables `:uid`, `:qty` and `:sym` (the symbol is
    /// `'S' || :sym`), every other value a typed literal. The order is built with markers
    /// in those three places, which the rendering swaps for the variables. (Without a fee,
    /// the cost of a buy and the proceeds of a sale are the amount: price × `:qty`.)
    public static func pgbenchText(_ side: TradeSide, price: Decimal) -> String {
        let marker = (user: -7_001, quantity: 7_002, symbol: "S?")
        let order = TradeOrder(userID: marker.user, portfolioID: nil, symbol: marker.symbol, quantity: marker.quantity,
                               price: price, fee: 0)
        let variables: [PostgresBind: String] = [
            PostgresBind(marker.user): ":uid",
            PostgresBind(marker.quantity): ":qty",
            PostgresBind(marker.symbol): "('S' || :sym)",
            PostgresBind(order.amount): "(\(price) * :qty)::numeric",
        ]
        return query(side, order).rendered { _, bind in
            if let variable = variables[bind] { return variable }
            switch bind.value {
            case .null: return bind.dataType == .unspecified ? "NULL" : "NULL::\(bind.dataType)"
            case .text(let text):
                let literal = "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
                return bind.dataType == .unspecified ? literal : "\(literal)::\(bind.dataType)"
            case .binary(let bytes): return "'\\x\(bytes.map { String(format: "%02x", $0) }.joined())'::\(bind.dataType)"
            }
        }
    }

    /// The portfolio the order names, when it belongs to the user. Locking it first gives
    /// buys and sells one lock order (portfolio, then holding), so they cannot deadlock.
    /// A league portfolio trades only while its league runs (`open`).
    private static func ownedPortfolio(_ order: TradeOrder) -> PostgresQuery {
        """
        owned AS (
            SELECT p.id, (l.id IS NULL OR (now() >= l.starts_at AND (l.ends_at IS NULL OR now() < l.ends_at))) AS open
            FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            WHERE p.user_id = \(order.userID) AND p.archived_at IS NULL
              AND CASE WHEN \(order.portfolioID)::int8 IS NULL THEN p.league_id IS NULL ELSE p.id = \(order.portfolioID)::int8 END
            FOR UPDATE OF p
        )
        """
    }

    /// The outcome: the portfolio is missing or closed, or the trade (absent when the
    /// conditional update refused it) was made.
    private static func outcome(refusal: TradeOutcome) -> PostgresQuery {
        """
        outcome AS (
            SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM owned) THEN \(TradeOutcome.notFound)
                        WHEN NOT (SELECT open FROM owned) THEN \(TradeOutcome.closed)
                        WHEN NOT EXISTS (SELECT 1 FROM trade) THEN \(refusal)
                        ELSE \(TradeOutcome.ok) END::text AS outcome
        )
        """
    }

    /// Records the outcome under the idempotency key (if any) and reports it; the insert
    /// of a concurrent duplicate waits for this one and then fails, undoing that statement.
    private static func rememberAndReport(_ order: TradeOrder) -> PostgresQuery {
        """
        remembered AS (
            INSERT INTO idempotency_keys (user_id, key, request_hash, outcome, trade_id, cash, position)
            SELECT \(order.userID), \(order.idempotency?.key)::text, \(order.idempotency?.requestHash)::text, outcome.outcome,
                   (SELECT id FROM trade), (SELECT cash FROM cash_after), (SELECT quantity FROM position_after)
            FROM outcome WHERE \(order.idempotency?.key)::text IS NOT NULL
        )
        SELECT outcome.outcome, trade.id, trade.portfolio_id, trade.created_at,
               (SELECT cash FROM cash_after), (SELECT quantity FROM position_after)
        FROM outcome LEFT JOIN trade ON true
        """
    }

    /// Buys in one statement: the cash is taken only if it covers the cost (checked by
    /// the row update itself, so no interleaving can overspend), then the holding and the
    /// trade row are written.
    private static func buy(_ order: TradeOrder) -> PostgresQuery {
        let cost = order.amount + order.fee
        return """
            WITH \(ownedPortfolio(order)), cash_after AS (
                UPDATE portfolios p SET cash = p.cash - \(cost)
                FROM owned WHERE p.id = owned.id AND owned.open AND p.cash >= \(cost)
                RETURNING p.id, p.cash
            ), position_after AS (
                INSERT INTO holdings AS h (portfolio_id, symbol, quantity, cost_basis)
                SELECT id, \(order.symbol), \(order.quantity), \(order.amount) FROM cash_after
                ON CONFLICT (portfolio_id, symbol) DO UPDATE SET
                    quantity = h.quantity + excluded.quantity, cost_basis = h.cost_basis + excluded.cost_basis
                RETURNING quantity
            ), trade AS (
                INSERT INTO trades (portfolio_id, symbol, side, quantity, price, amount, fee)
                SELECT id, \(order.symbol), \(TradeSide.buy), \(order.quantity), \(order.price), \(order.amount), \(order.fee)
                FROM cash_after
                RETURNING id, portfolio_id, created_at
            ), \(outcome(refusal: .insufficientFunds)), \(rememberAndReport(order))
            """
    }

    /// Sells in one statement: the holding is locked (read at its latest version), the
    /// shares are taken only if enough are held, the cost basis shrinks in proportion,
    /// and the proceeds are credited. The trade row records the realized gain: proceeds
    /// after the fee minus the average cost of the shares sold. A holding sold to zero
    /// stays as a hidden row.
    private static func sell(_ order: TradeOrder) -> PostgresQuery {
        let quantity = order.quantity
        let proceeds = order.amount - order.fee
        return """
            WITH \(ownedPortfolio(order)), held AS (
                SELECT h.portfolio_id, h.quantity, h.cost_basis
                FROM holdings h JOIN owned ON h.portfolio_id = owned.id
                WHERE owned.open AND h.symbol = \(order.symbol) AND h.quantity >= \(quantity)
                FOR UPDATE OF h
            ), position_after AS (
                UPDATE holdings h SET
                    quantity = held.quantity - \(quantity),
                    cost_basis = CASE WHEN held.quantity = \(quantity) THEN 0
                                      ELSE round(held.cost_basis * (held.quantity - \(quantity)) / held.quantity, 10) END
                FROM held WHERE h.portfolio_id = held.portfolio_id AND h.symbol = \(order.symbol)
                RETURNING h.portfolio_id, h.quantity, held.cost_basis - h.cost_basis AS cost_sold
            ), cash_after AS (
                UPDATE portfolios p SET cash = p.cash + \(proceeds)
                FROM position_after WHERE p.id = position_after.portfolio_id
                RETURNING p.id, p.cash
            ), trade AS (
                INSERT INTO trades (portfolio_id, symbol, side, quantity, price, amount, fee, realized_gain)
                SELECT id, \(order.symbol), \(TradeSide.sell), \(quantity), \(order.price), \(order.amount), \(order.fee),
                       \(proceeds) - cost_sold
                FROM cash_after, position_after
                RETURNING id, portfolio_id, created_at
            ), \(outcome(refusal: .insufficientShares)), \(rememberAndReport(order))
            """
    }
}
