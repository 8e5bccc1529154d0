import Foundation
import Postgres

/// What a fill or placing statement found: the trade was made (the order placed), or why
/// not. The first five are the trade gate's (SQL `trade_gate`), the rest the statement's
/// own checks; `check()` is the one reading of them as a trader's refusal.
enum TradeOutcome: String, PostgresCodable {
    case ok
    case notFound = "not_found"
    /// A league portfolio outside its league's run.
    case closed
    /// A league portfolio of a league its host has frozen.
    case frozen
    /// No note, on a league portfolio whose league requires one (`journalRequired`).
    case noteRequired = "note_required"
    /// Sent through an API key, on a portfolio whose league forbids keys.
    case botsForbidden = "bots_forbidden"
    case insufficientFunds = "insufficient_funds"
    case insufficientShares = "insufficient_shares"
    /// A short sale the portfolio's equity would not cover (league rule `shortMarginPercent`).
    case insufficientMargin = "insufficient_margin"
    /// A short sale of a stock below the league's minimum price for shorting (`minShortPrice`).
    case priceTooLow = "price_too_low"
    /// A resting order that is no longer open, or that another matcher is filling now.
    case notOpen = "not_open"
    /// A team's portfolio, named by one of its viewers (who see it but do not trade it).
    case notATrader = "not_a_trader"
}

extension TradeOutcome {
    /// Returns for `ok`; otherwise throws the refusal the outcome means to the trader.
    func check() throws {
        switch self {
        case .ok: return
        case .insufficientFunds: throw TradingError.insufficientFunds
        case .insufficientShares: throw TradingError.insufficientShares
        case .insufficientMargin: throw TradingError.insufficientMargin
        case .priceTooLow: throw TradingError.priceTooLow(shorting: true)
        case .closed: throw TradingError.leagueNotRunning
        case .frozen: throw TradingError.tradingFrozen
        case .noteRequired: throw TradingError.noteRequired
        case .botsForbidden: throw ApiKeyError.botsForbidden
        case .notFound: throw TradingError.noSuchPortfolio
        case .notATrader: throw TradingError.notATrader
        // A market order and a placed one claim no open order, so this is never their outcome.
        case .notOpen: throw TradingError.incompleteRecord
        }
    }
}

/// The order a fill belongs to.
public enum OrderToFill: Sendable {
    /// A plain market trade (`POST /api/stock/buy|sell`): the trade row is the whole record
    /// of its order (see `order_book`).
    case marketTrade
    /// A market order sent to `POST /api/orders`, filled as it arrives: the fill writes its
    /// order row (with its client order id), already filled.
    case market(clientOrderID: String?, requestHash: String, timeInForce: TimeInForce)
    /// An open order: the fill claims it (skipping it when another process holds it),
    /// releases what it reserved and marks it filled.
    case resting(id: Int)
}

/// An order to fill at a known price, as the fill statement takes it.
public struct TradeOrder: Sendable {
    let userID: Int
    /// nil: the user's personal portfolio (a resting order names its own).
    let portfolioID: Int?
    let symbol: String
    let quantity: Int
    let price: Decimal
    let fee: Decimal
    let fill: OrderToFill
    /// Set where the rules allow short selling: the percentage of the short positions'
    /// value that equity must cover.
    let shortMarginPercent: Decimal?
    /// The Idempotency-Key and a hash of the request, to remember the outcome under.
    let idempotency: (key: String, requestHash: String)?
    /// Set for a back-dated fill in a practice portfolio.
    let backdating: Backdating?
    /// Set where the portfolio holds another currency than dollars: the rate (spread
    /// included) that turned the dollar price into `price`, recorded on the trade.
    let fxRate: Decimal?
    /// The trader's journal note, kept on the trade (and its order row).
    let note: String?
    /// Set where no league's journal rule applies (orders sent through `/v2`).
    let journalExempt: Bool
    /// Sent through an API key: the trade gate asks whether the portfolio's league forbids keys.
    let byKey: Bool
    /// Who placed it, when not `userID`: a team's trader, the order acting as the team's
    /// account (`acting`).
    let placedBy: Int?
    /// Where the price came from beyond the quote, per share (`FillPricing`), recorded on
    /// the trade.
    let spread: Decimal
    let impact: Decimal
    /// What made the fill, recorded on the trade.
    let source: TradeSource
    /// Set where the rules allow short selling but not of a stock this cheap
    /// (`minShortPrice`): the sale may sell what is held, and goes short nowhere.
    let shortingRefused: Bool
    /// Set where the rules lend (`marginPercent`): a buy beyond the buying power may
    /// borrow while the equity after it covers this % of the long positions' value (and
    /// `shortMarginPercent` of the shorts').
    let marginPercent: Decimal?
    /// Set in a league with a volume cap (`TradingRules.volumeCap`): the fill is counted
    /// against it (`volume_fills`) and fails whole (`TradingError.volumeCap`) beyond it.
    var volumeCap: VolumeCap? = nil
    /// A resting order's fill of part of what it has left (under a volume cap): the order
    /// stays open, holding back the rest.
    var partial = false
    /// A resting leg's sibling (`OrderClass`): claimed with it, its hold released with the
    /// fill's, and cancelled by it.
    var sibling: Int? = nil
    /// A resting entry with legs waiting for it: its fill opens them, and their shares
    /// (the ones it bought) are held once.
    var opensLegs = false

    /// The most shares the portfolio's fills in the symbol may total on the market's `day`.
    struct VolumeCap: Sendable {
        let shares: Int
        let day: String
    }

    /// Who placed the order: recorded on its order and trade, and the owner of its
    /// idempotency key.
    var placer: Int { placedBy ?? userID }

    /// A fill dated a past day's close: the quantity and price are that day's, the
    /// position moves by what those shares are today (`shares`, after the splits since),
    /// and a buy may not spend the income received after it (`incomeAfter`).
    public struct Backdating: Sendable {
        let at: Date
        let shares: Int
        let incomeAfter: Decimal
    }

    public init(userID: Int, portfolioID: Int?, symbol: String, quantity: Int, price: Decimal, fee: Decimal,
                fill: OrderToFill = .marketTrade, shortMarginPercent: Decimal? = nil,
                idempotency: (key: String, requestHash: String)? = nil, backdating: Backdating? = nil, fxRate: Decimal? = nil,
                note: String? = nil, journalExempt: Bool = false, byKey: Bool = false, placedBy: Int? = nil,
                spread: Decimal = 0, impact: Decimal = 0, source: TradeSource = .trade, shortingRefused: Bool = false,
                marginPercent: Decimal? = nil) {
        self.userID = userID
        self.portfolioID = portfolioID
        self.symbol = symbol
        self.quantity = quantity
        self.price = price
        self.fee = fee
        self.fill = fill
        self.shortMarginPercent = shortMarginPercent
        self.idempotency = idempotency
        self.backdating = backdating
        self.fxRate = fxRate
        self.note = note
        self.journalExempt = journalExempt
        self.byKey = byKey
        self.placedBy = placedBy
        self.spread = spread
        self.impact = impact
        self.source = source
        self.shortingRefused = shortingRefused
        self.marginPercent = marginPercent
    }

    public var amount: Decimal { price * Decimal(quantity) }

    /// The shares the position gains or loses: the quantity, or for a back-dated fill what
    /// that quantity is today.
    var shares: Int { backdating?.shares ?? quantity }

    /// The same order dated a past day's close (no short selling there).
    func backdated(_ backdating: Backdating) -> TradeOrder {
        TradeOrder(userID: userID, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: price, fee: fee,
                   fill: fill, shortMarginPercent: nil, idempotency: idempotency, backdating: backdating, fxRate: fxRate,
                   note: note, journalExempt: journalExempt, byKey: byKey, placedBy: placedBy, spread: spread, impact: impact,
                   source: source)
    }

    /// The same order placed by its placer on a team's portfolio, run as the team's
    /// account (the portfolio's holder).
    func acting(as account: Int) -> TradeOrder {
        var acting = TradeOrder(userID: account, portfolioID: portfolioID, symbol: symbol, quantity: quantity, price: price, fee: fee,
                   fill: fill, shortMarginPercent: shortMarginPercent, idempotency: idempotency, backdating: backdating, fxRate: fxRate,
                   note: note, journalExempt: journalExempt, byKey: byKey, placedBy: placer, spread: spread, impact: impact,
                   source: source, shortingRefused: shortingRefused, marginPercent: marginPercent)
        acting.volumeCap = volumeCap
        acting.partial = partial
        acting.sibling = sibling
        acting.opensLegs = opensLegs
        return acting
    }
}

/// How an order fills: one statement per fill, so cash, holding, trade row and order row
/// change whole or not at all. Market trades and resting orders fill through the same
/// statement. Public so the benchmark renders the very same query for pgbench.
public enum TradeStatement {
    public static func query(_ side: TradeSide, _ order: TradeOrder) -> PostgresQuery {
        switch (side, order.shortMarginPercent) {
        case (.buy, nil): buy(order)
        case (.sell, nil): sell(order)
        case (.buy, .some): buyWithShorts(order)
        case (.sell, .some(let margin)): sellWithShorts(order, marginPercent: margin)
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
            case .binary(let bytes): return "'\\x\(bytes.lowercaseHex)'::\(bind.dataType)"
            }
        }
    }

    /// The portfolio that fills the order, locked, with its trade gate (SQL `trade_gate`).
    /// A market order names a portfolio of the user's; a resting order is claimed first
    /// (order, then portfolio, then holding: the lock order of every statement that
    /// touches orders, so none can deadlock another), its note and key mark its own (the
    /// note was asked for when it was placed).
    private static func ownedPortfolio(_ order: TradeOrder) -> PostgresQuery {
        switch order.fill {
        case .marketTrade, .market:
            return owned(userID: order.userID, portfolioID: order.portfolioID,
                         noted: order.note != nil || order.journalExempt, keyForbidden: order.byKey ? keyForbidden : "false")
        case .resting(let id):
            return """
                \(claimed(id, order)), owned AS (
                    SELECT p.id, trade_gate(l, now(), true, claimed.by_key AND \(keyForbidden)) AS gate
                    FROM claimed JOIN portfolios p ON p.id = claimed.portfolio_id LEFT JOIN leagues l ON l.id = p.league_id
                    WHERE p.archived_at IS NULL
                    FOR UPDATE OF p
                )
                """
        }
    }

    /// The CTE `claimed`: the open order `id`, locked unless another process holds it. A leg
    /// with an open sibling is claimed only with it (`pair`, both locked in id order, the
    /// lock order of orders), so of two legs filling at once on two processes one fills
    /// and cancels the other, or neither does now. An entry locks the legs it opens (`legs`).
    private static func claimed(_ id: Int, _ order: TradeOrder) -> PostgresQuery {
        let columns: PostgresQuery = "o.id, o.portfolio_id, o.reserved_cash, o.reserved_quantity, o.note, o.by_key, o.placed_by"
        let legs: PostgresQuery = order.opensLegs ? """
            , legs AS (
                SELECT l.id FROM orders l WHERE l.parent_id = \(id) AND l.status = 'held'
                ORDER BY l.id FOR UPDATE
            )
            """ : ""
        guard let sibling = order.sibling else {
            return """
                claimed AS (
                    SELECT \(columns) FROM orders o
                    WHERE o.id = \(id) AND o.status = 'new'
                    FOR UPDATE SKIP LOCKED
                )\(legs)
                """
        }
        return """
            pair AS (
                SELECT \(columns) FROM orders o
                WHERE o.id IN (\(id), \(sibling)) AND o.status = 'new'
                ORDER BY o.id FOR UPDATE SKIP LOCKED
            ), claimed AS (
                SELECT * FROM pair WHERE pair.id = \(id)
                  AND (EXISTS (SELECT 1 FROM pair WHERE pair.id = \(sibling))
                       OR NOT EXISTS (SELECT 1 FROM orders s WHERE s.id = \(sibling) AND s.status = 'new'))
            )\(legs)
            """
    }

    /// Whether the gate of `owned` lets the portfolio trade: the condition of every update
    /// a fill or a placing statement makes.
    static let gateOpen: PostgresQuery = "owned.gate = 'ok'"

    /// Whether no API key may trade the portfolio `p` (`api_keys_forbidden_portfolios`),
    /// read by the statement for a key's trade only, and by a key's lookup
    /// (`ApiKeyStore.holder`): planned with the statement, a probe of the set costs
    /// ~0.06 ms where a call of `api_keys_forbidden` costs ~0.4–0.8 ms (its body, a
    /// subquery, is never inlined and is planned anew at each call).
    static let keyForbidden: PostgresQuery = "EXISTS (SELECT 1 FROM api_keys_forbidden_portfolios() f WHERE f.portfolio_id = p.id)"

    /// The CTE `owned`: the user's portfolio named `portfolioID` (nil: the personal one),
    /// locked, with its trade gate (`gate`) and any `extra` columns of it or its league
    /// (`l`). The one statement part by which a fill and a placing statement find the
    /// portfolio and ask whether it may trade now; `keyForbidden` is `keyForbidden` for
    /// a key's order, else false.
    static func owned(userID: Int, portfolioID: Int?, noted: Bool, keyForbidden: PostgresQuery, extra: PostgresQuery = "") -> PostgresQuery {
        """
        owned AS (
            SELECT p.id, p.user_id AS account, trade_gate(l, now(), \(noted), \(keyForbidden)) AS gate\(extra)
            FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            WHERE p.user_id = \(userID) AND p.archived_at IS NULL
              AND portfolio_named(p.kind, p.id, \(portfolioID)::int8)
            FOR UPDATE OF p
        )
        """
    }

    /// The statement's outcome (`TradeOutcome`) from `owned` and what it wrote (`written`,
    /// a CTE that is empty when the conditional update refused): the portfolio is missing,
    /// the gate refuses, the update refused (`refusal`), or all is well.
    static func gateOutcome(written: String, refusal: PostgresQuery, claimed: PostgresQuery = "") -> PostgresQuery {
        """
        CASE \(claimed)
             WHEN NOT EXISTS (SELECT 1 FROM owned) THEN \(TradeOutcome.notFound)
             WHEN (SELECT gate FROM owned) <> \(TradeOutcome.ok) THEN (SELECT gate FROM owned)
             WHEN NOT EXISTS (SELECT 1 FROM \(unescaped: written)) THEN \(refusal)
             ELSE \(TradeOutcome.ok) END::text
        """
    }

    /// The trade columns only some fills set: the day of a back-dated fill, the rate of a
    /// fill in another currency, the journal note (a resting order's own), what made it
    /// when not a trade, the spread and impact of a league's realistic fills. (A plain
    /// fill's statement is the same as before these existed.)
    private static func recorded(_ order: TradeOrder) -> (column: PostgresQuery, value: PostgresQuery) {
        var recorded: (column: PostgresQuery, value: PostgresQuery) = ("", "")
        if let backdating = order.backdating {
            recorded = (", created_at", ", \(backdating.at)::timestamptz")
        }
        if let rate = order.fxRate {
            recorded = ("\(recorded.column), fx_rate", "\(recorded.value), \(rate)::numeric")
        }
        switch order.fill {
        case .resting: recorded = ("\(recorded.column), note", "\(recorded.value), (SELECT note FROM claimed)")
        case .marketTrade, .market:
            if let note = order.note { recorded = ("\(recorded.column), note", "\(recorded.value), \(note)::text") }
        }
        if order.source != .trade {
            recorded = ("\(recorded.column), source", "\(recorded.value), \(order.source)::text")
        }
        if order.spread != 0 || order.impact != 0 {
            recorded = ("\(recorded.column), spread, impact", "\(recorded.value), \(order.spread)::numeric, \(order.impact)::numeric")
        }
        return recorded
    }

    /// Income a back-dated buy may not spend (none for a fill dated now).
    private static func incomeAfter(_ order: TradeOrder) -> PostgresQuery {
        guard let backdating = order.backdating else { return "" }
        return " - \(backdating.incomeAfter)"
    }

    /// What the claimed order releases of what it holds back (`column`: its cash or its
    /// shares; nothing for a market order): all of it, or for a part (`partial`) what the
    /// part uses of it — its cost, its shares — the rest held for what is left.
    private static func released(_ order: TradeOrder, _ column: String) -> PostgresQuery {
        switch order.fill {
        case .marketTrade, .market: "0"
        case .resting where order.partial:
            column == "reserved_cash"
                ? "least((SELECT reserved_cash FROM claimed), \(order.amount + order.fee))"
                : "least((SELECT reserved_quantity FROM claimed), \(order.shares))"
        case .resting:
            if let sibling = order.sibling {
                // A leg's fill releases the hold of its pair (their shares are held once).
                "((SELECT \(unescaped: column) FROM claimed) + coalesce((SELECT \(unescaped: column) FROM pair WHERE id = \(sibling)), 0))"
            } else {
                "(SELECT \(unescaped: column) FROM claimed)"
            }
        }
    }

    /// The order row: none for a plain market trade (no CTE at all: every part of the
    /// statement costs executor start-up on every trade), written filled for a market
    /// order, marked filled for a resting one.
    private static func orderRow(_ side: TradeSide, _ order: TradeOrder) -> PostgresQuery {
        switch order.fill {
        case .marketTrade:
            return ""
        case .market(let clientOrderID, let requestHash, let timeInForce):
            return """
                , order_row AS (
                    INSERT INTO orders (user_id, portfolio_id, client_order_id, request_hash, symbol, side, type,
                                        time_in_force, quantity, status, trade_id, created_at, updated_at, filled_at, note, placed_by)
                    SELECT (SELECT account FROM owned), trade.portfolio_id, \(clientOrderID)::text, \(requestHash), \(order.symbol),
                           \(side), \(OrderType.market), \(timeInForce), \(order.quantity), \(OrderStatus.filled), trade.id,
                           trade.created_at, trade.created_at, trade.created_at, \(order.note)::text, \(order.placer)
                    FROM trade
                    RETURNING id
                )
                """
        case .resting(let id) where order.partial:
            // A part: the order stays open with what it has filled so far and holds back the rest.
            let cash: PostgresQuery = side == .buy ? released(order, "reserved_cash") : "0"
            let shares: PostgresQuery = side == .sell ? released(order, "reserved_quantity") : "0"
            return """
                , order_row AS (
                    UPDATE orders o SET filled_quantity = o.filled_quantity + \(order.quantity),
                                        filled_amount = o.filled_amount + \(order.amount),
                                        reserved_cash = o.reserved_cash - \(cash), reserved_quantity = o.reserved_quantity - \(shares),
                                        updated_at = trade.created_at
                    FROM trade WHERE o.id = \(id)
                    RETURNING o.id
                )
                """
        case .resting(let id):
            return """
                , order_row AS (
                    UPDATE orders o SET status = \(OrderStatus.filled), trade_id = trade.id, reserved_cash = 0,
                                        reserved_quantity = 0, filled_at = trade.created_at, updated_at = trade.created_at
                    FROM trade WHERE o.id = \(id)
                    RETURNING o.id
                )
                """
        }
    }

    /// The outcome: the order is no longer open, the portfolio is missing or closed, or
    /// the trade (absent when the conditional update refused it) was made.
    private static func outcome(_ order: TradeOrder, refusal: PostgresQuery) -> PostgresQuery {
        let claimed: PostgresQuery = switch order.fill {
        case .marketTrade, .market: ""
        case .resting: "WHEN NOT EXISTS (SELECT 1 FROM claimed) THEN \(TradeOutcome.notOpen)"
        }
        return """
            outcome AS (
                SELECT \(gateOutcome(written: "trade", refusal: refusal, claimed: claimed)) AS outcome
            )
            """
    }

    /// Records the outcome under the idempotency key (if there is one) and reports it; the
    /// insert of a concurrent duplicate waits for this one and then fails, undoing that
    /// statement.
    /// A named portfolio that is none of the placer's is not remembered under the key: the
    /// store asks next whether it is a team's they trade for, and runs the order again as
    /// the team's account, which remembers its own outcome (`TradingStore.execute`).
    private static func forgotten(_ order: TradeOrder) -> PostgresQuery {
        order.portfolioID != nil && order.placedBy == nil ? " WHERE outcome.outcome <> \(TradeOutcome.notFound)" : ""
    }

    private static func rememberAndReport(_ order: TradeOrder) -> PostgresQuery {
        let remembered: PostgresQuery = order.idempotency.map { idempotency in
            """
            , remembered AS (
                INSERT INTO idempotency_keys (user_id, key, request_hash, outcome, trade_id, cash, position)
                SELECT \(order.placer), \(idempotency.key), \(idempotency.requestHash), outcome.outcome,
                       (SELECT id FROM trade), (SELECT cash FROM cash_after), (SELECT quantity FROM position_after)
                FROM outcome\(forgotten(order))
            )
            """
        } ?? ""
        let orderID: PostgresQuery = switch order.fill {
        case .marketTrade: "NULL::int8"
        case .market, .resting: "(SELECT id FROM order_row)"
        }
        // A leg's sibling is closed by a function, in a CTE that runs only when its column is
        // read (not by count(*), nor by a join the planner may drop).
        let siblingClosed: PostgresQuery = order.sibling == nil ? "" : " WHERE (SELECT count(closed) FROM sibling_closed) >= 0"
        return """
            \(remembered)
            SELECT outcome.outcome, trade.id, trade.portfolio_id, trade.created_at,
                   (SELECT cash FROM cash_after), (SELECT quantity FROM position_after), \(orderID)
            FROM outcome LEFT JOIN trade ON true\(siblingClosed)
            """
    }

    /// Buys in one statement: the cash is taken only if the buying power (cash not
    /// reserved by other open orders, plus what this order reserved) covers the cost —
    /// checked by the row update itself, so no interleaving can overspend — then the
    /// holding, the trade row and the order row are written.
    private static func buy(_ order: TradeOrder) -> PostgresQuery {
        let held = heldForLegs(order)
        return """
        WITH \(ownedPortfolio(order)), \(buyCash(order)), position_after AS (
            INSERT INTO holdings AS h (portfolio_id, symbol, quantity, cost_basis\(held.column))
            SELECT id, \(order.symbol), \(order.shares), \(order.amount)\(held.value) FROM cash_after
            ON CONFLICT (portfolio_id, symbol) DO UPDATE SET
                quantity = h.quantity + excluded.quantity, cost_basis = h.cost_basis + excluded.cost_basis\(held.update)
            RETURNING quantity
        ), \(tradeRow(.buy, order, realizedGain: nil, from: "cash_after"))\(ending(.buy, order, refusal: buyRefusal(order)))
        """
    }

    /// The holding's held shares an entry adds for its legs (`legsHeld`), in a buy's
    /// upsert of the holding: none for any other buy (the statement is then as before).
    private static func heldForLegs(_ order: TradeOrder) -> (column: PostgresQuery, value: PostgresQuery, update: PostgresQuery) {
        guard order.opensLegs else { return ("", "", "") }
        return (", reserved_quantity", ", \(legsHeld(order, after: "\(order.quantity)"))",
                ", reserved_quantity = h.reserved_quantity + \(legsHeld(order, after: "h.quantity + excluded.quantity"))")
    }

    /// A buy's cash: taken only if the buying power (cash not reserved by other open
    /// orders, plus what this order reserved; for a back-dated fill, less the income
    /// received after it) covers the cost — checked by the row update itself, so no
    /// interleaving can overspend.
    private static func buyCash(_ order: TradeOrder) -> PostgresQuery {
        let cost = order.amount + order.fee
        let released = released(order, "reserved_cash")
        // A forced cover of a margin call goes through where the portfolio may borrow.
        let forced: PostgresQuery = order.source == .liquidation ? " OR p.may_borrow" : ""
        let affordable: PostgresQuery = "(buying_power(p.cash, p.reserved_cash) + \(released)\(incomeAfter(order)) >= \(cost)\(forced))"
        guard let margin = order.marginPercent else {
            return """
                cash_after AS (
                    UPDATE portfolios p SET cash = p.cash - \(cost), reserved_cash = p.reserved_cash - \(released)
                    FROM owned WHERE p.id = owned.id AND \(Self.gateOpen) AND \(affordable)
                    RETURNING p.id, p.cash
                )
                """
        }
        // Beyond the buying power the buy borrows, while the equity after it (the cash it
        // leaves plus the positions at current prices, the new shares at the quote) covers
        // the initial margin of the positions after it (SQL margin_needed).
        let bought = FillPricing(side: .buy, price: order.price, spread: order.spread, impact: order.impact).quote * Decimal(order.quantity)
        return """
            margin_after AS (
                SELECT net_worth(p.cash, sum(v.value)) - \(cost) + \(bought) >= (margin_needed(
                           coalesce(sum(v.value) FILTER (WHERE v.quantity > 0), 0) + \(bought),
                           coalesce(sum(-v.value) FILTER (WHERE v.quantity < 0), 0),
                           \(margin), \(order.shortMarginPercent)::numeric, NULL, NULL)).initial AS covered
                FROM owned JOIN portfolios p ON p.id = owned.id LEFT JOIN holding_values v ON v.portfolio_id = p.id
                GROUP BY p.id, p.cash
            ), cash_after AS (
                UPDATE portfolios p SET cash = p.cash - \(cost), reserved_cash = p.reserved_cash - \(released)
                FROM owned WHERE p.id = owned.id AND \(Self.gateOpen) AND (\(affordable) OR (SELECT covered FROM margin_after))
                RETURNING p.id, p.cash
            )
            """
    }

    /// What a buy refused by its cash update lacked: buying power, or where the rules lend, margin.
    private static func buyRefusal(_ order: TradeOrder) -> TradeOutcome {
        order.marginPercent == nil ? .insufficientFunds : .insufficientMargin
    }

    /// A sale's proceeds after its fee, credited to the portfolio whose position it moved.
    private static func saleCash(_ order: TradeOrder) -> PostgresQuery {
        """
        cash_after AS (
            UPDATE portfolios p SET cash = p.cash + \(order.amount - order.fee)
            FROM position_after WHERE p.id = position_after.portfolio_id
            RETURNING p.id, p.cash
        )
        """
    }

    /// The trade row of every fill, written from `source` (the CTEs that give the
    /// portfolio's `id`): its side, quantity, price — the statement's input, priced by
    /// `TradingRules.fill` — amount and fee, the gain a sale or a cover realizes, and the
    /// columns only some fills set.
    private static func tradeRow(_ side: TradeSide, _ order: TradeOrder, realizedGain: PostgresQuery?, from source: String) -> PostgresQuery {
        let recorded = recorded(order)
        let gain: (column: PostgresQuery, value: PostgresQuery) = realizedGain.map { (", realized_gain", ", \($0)") } ?? ("", "")
        return """
            trade AS (
                INSERT INTO trades (portfolio_id, symbol, side, quantity, price, amount, fee, placed_by\(gain.column)\(recorded.column))
                SELECT id, \(order.symbol), \(side), \(order.quantity), \(order.price), \(order.amount), \(order.fee), \(placedBy(order))\(gain.value)\(recorded.value)
                FROM \(unescaped: source)
                RETURNING id, portfolio_id, created_at
            )
            """
    }

    /// Who placed the trade: the request's player, or a resting order's placer.
    private static func placedBy(_ order: TradeOrder) -> PostgresQuery {
        switch order.fill {
        case .marketTrade, .market: "\(order.placer)::int8"
        case .resting: "(SELECT placed_by FROM claimed)"
        }
    }

    /// What every fill ends with after its trade row: the order row, the outcome (the
    /// update refused: `refusal`) and what is remembered and reported.
    private static func ending(_ side: TradeSide, _ order: TradeOrder, refusal: PostgresQuery) -> PostgresQuery {
        "\(orderRow(side, order))\(volumeCounted(order))\(legsMoved(order)), \(outcome(order, refusal: refusal))\(rememberAndReport(order))"
    }

    /// A leg's fill cancels its sibling; an entry's fill opens its legs, the first of them
    /// holding the shares it bought (as many as the position after it has: `legsHeld`).
    private static func legsMoved(_ order: TradeOrder) -> PostgresQuery {
        var moved: PostgresQuery = ""
        if let sibling = order.sibling {
            // (Its hold went with the fill's: `released`.)
            moved = """
                , sibling_closed AS (
                    SELECT close_orders(ARRAY(SELECT id FROM pair WHERE id = \(sibling)), \(OrderStatus.canceled),
                                        'The other leg filled.', false) AS closed
                    FROM trade
                )
                """
        }
        if order.opensLegs {
            moved = """
                \(moved), legs_opened AS (
                    UPDATE orders l SET status = 'new', updated_at = trade.created_at,
                        reserved_quantity = CASE WHEN l.id = (SELECT min(id) FROM legs)
                                                 THEN \(legsHeld(order, after: "(SELECT quantity FROM position_after)")) ELSE 0 END
                    FROM trade WHERE l.id IN (SELECT id FROM legs)
                )
                """
        }
        return moved
    }

    /// What an entry's fill adds to its holding's held shares for the legs it opens: the
    /// shares it bought, at most the position after it (a buy that covers a short keeps
    /// less); nothing once its legs are gone. `after` is the position after the fill.
    private static func legsHeld(_ order: TradeOrder, after: PostgresQuery) -> PostgresQuery {
        "CASE WHEN EXISTS (SELECT 1 FROM legs) THEN least(\(order.quantity), greatest(\(after), 0)) ELSE 0 END"
    }

    /// Under a volume cap, the fill's shares counted against it: the upsert locks the
    /// day's row, so fills at once add up, and one that would pass the cap fails the
    /// statement whole (constraint `volume_fills_within_cap`). Absent without a cap.
    private static func volumeCounted(_ order: TradeOrder) -> PostgresQuery {
        guard let cap = order.volumeCap else { return "" }
        return """
            , volume_counted AS (
                INSERT INTO volume_fills AS v (portfolio_id, symbol, day, quantity, cap)
                SELECT portfolio_id, \(order.symbol), \(cap.day)::date, \(order.quantity), \(cap.shares) FROM trade
                ON CONFLICT (portfolio_id, symbol, day) DO UPDATE SET quantity = v.quantity + excluded.quantity, cap = excluded.cap
            )
            """
    }

    private static func ending(_ side: TradeSide, _ order: TradeOrder, refusal: TradeOutcome) -> PostgresQuery {
        ending(side, order, refusal: "\(refusal)")
    }

    /// Sells in one statement: the holding is locked (read at its latest version), the
    /// shares are taken only if enough are held and not reserved by other open orders,
    /// the cost basis shrinks in proportion, and the proceeds are credited. The trade row
    /// records the realized gain: proceeds after the fee minus the average cost of the
    /// shares sold. A holding sold to zero stays as a hidden row.
    private static func sell(_ order: TradeOrder) -> PostgresQuery {
        let quantity = order.shares
        let released = released(order, "reserved_quantity")
        return """
            WITH \(ownedPortfolio(order)), held AS (
                SELECT h.portfolio_id, h.quantity, h.cost_basis
                FROM holdings h JOIN owned ON h.portfolio_id = owned.id
                WHERE \(Self.gateOpen) AND h.symbol = \(order.symbol) AND free_shares(h.quantity, h.reserved_quantity) + \(released) >= \(quantity)
                FOR UPDATE OF h
            ), position_after AS (
                UPDATE holdings h SET
                    quantity = held.quantity - \(quantity),
                    reserved_quantity = h.reserved_quantity - \(released),
                    cost_basis = cost_basis_kept(held.cost_basis, held.quantity, held.quantity - \(quantity))
                FROM held WHERE h.portfolio_id = held.portfolio_id AND h.symbol = \(order.symbol)
                RETURNING h.portfolio_id, h.quantity, held.cost_basis - h.cost_basis AS cost_sold
            ), \(saleCash(order)),
            \(tradeRow(.sell, order, realizedGain: "\(order.amount - order.fee) - cost_sold", from: "cash_after, position_after"))\(
                ending(.sell, order, refusal: .insufficientShares))
            """
    }

    // MARK: Where the rules allow short selling

    /// The position in the order's symbol before the fill, locked (zero when there is none).
    private static func positionBefore(_ order: TradeOrder) -> PostgresQuery {
        """
        held AS (
            SELECT h.quantity, h.reserved_quantity, h.cost_basis
            FROM holdings h JOIN owned ON h.portfolio_id = owned.id
            WHERE h.symbol = \(order.symbol)
            FOR UPDATE OF h
        ), position_before AS (
            SELECT coalesce((SELECT quantity FROM held), 0) AS quantity,
                   coalesce((SELECT reserved_quantity FROM held), 0) AS reserved_quantity,
                   coalesce((SELECT cost_basis FROM held), 0) AS cost_basis
        )
        """
    }

    /// A buy that may cover a short: covering shrinks the short's (negative) cost basis in
    /// proportion and realizes what it was sold for minus what covering it costs; shares
    /// bought beyond the short open a long position at the price.
    private static func buyWithShorts(_ order: TradeOrder) -> PostgresQuery {
        let quantity = order.quantity
        let held = heldForLegs(order)
        let gain: PostgresQuery = """
            CASE WHEN b.quantity < 0 THEN
                cost_basis_kept(b.cost_basis, b.quantity, least(b.quantity + \(quantity), 0)) - b.cost_basis
                - \(order.price) * least(-b.quantity, \(quantity)) - \(order.fee)
            END
            """
        return """
            WITH \(ownedPortfolio(order)), \(positionBefore(order)), \(buyCash(order)), position_after AS (
                INSERT INTO holdings AS h (portfolio_id, symbol, quantity, cost_basis\(held.column))
                SELECT id, \(order.symbol), \(quantity), \(order.amount)\(held.value) FROM cash_after
                ON CONFLICT (portfolio_id, symbol) DO UPDATE SET
                    quantity = h.quantity + excluded.quantity\(held.update),
                    cost_basis = CASE WHEN h.quantity >= 0 THEN h.cost_basis + excluded.cost_basis
                                      WHEN h.quantity + excluded.quantity <= 0
                                          THEN cost_basis_kept(h.cost_basis, h.quantity, h.quantity + excluded.quantity)
                                      ELSE \(order.price) * (h.quantity + excluded.quantity) END
                RETURNING quantity
            ), \(tradeRow(.buy, order, realizedGain: gain, from: "cash_after, position_before b"))\(
                ending(.buy, order, refusal: buyRefusal(order)))
            """
    }

    /// A sale that may go short: shares not reserved by other orders are sold first, and
    /// beyond them the sale opens (or adds to) a short position — only while no other
    /// order holds shares of the symbol, and only if the equity after the sale covers
    /// `marginPercent` of every short position's value after it. A long position sold
    /// realizes its gain as a plain sale does; a short's cost basis is minus the proceeds.
    private static func sellWithShorts(_ order: TradeOrder, marginPercent: Decimal) -> PostgresQuery {
        let quantity = order.quantity
        let released = released(order, "reserved_quantity")
        let gain: PostgresQuery = """
            CASE WHEN b.quantity > 0 THEN
                \(order.price) * least(b.quantity, \(quantity)) - \(order.fee)
                - (b.cost_basis - cost_basis_kept(b.cost_basis, b.quantity, greatest(b.quantity - \(quantity), 0)))
            END
            """
        let refusal: PostgresQuery = order.shortingRefused
            ? "\(TradeOutcome.priceTooLow)"
            : "CASE WHEN (SELECT reserved FROM others) > 0 THEN \(TradeOutcome.insufficientShares) ELSE \(TradeOutcome.insufficientMargin) END"
        // Below the league's minimum price for shorting, only the shares held may be sold.
        let mayGoShort: PostgresQuery = order.shortingRefused ? "false" : "(others.reserved = 0 AND margin.covered)"
        return """
            WITH \(ownedPortfolio(order)), \(positionBefore(order)), others AS (
                SELECT free_shares(b.quantity, b.reserved_quantity - \(released)) AS free, b.reserved_quantity - \(released) AS reserved
                FROM position_before b
            ), margin AS (
                -- At the quote a sale changes equity by its fee only.
                SELECT (net_worth(p.cash, sum(v.value)) - \(order.fee)) * 100 >= \(marginPercent) * (
                           coalesce(sum(-v.value) FILTER (WHERE v.quantity < 0 AND v.symbol <> \(order.symbol)), 0)
                           + greatest(\(quantity) - (SELECT quantity FROM position_before), 0) * \(order.price)) AS covered
                FROM owned JOIN portfolios p ON p.id = owned.id LEFT JOIN holding_values v ON v.portfolio_id = p.id
                GROUP BY p.id, p.cash
            ), allowed AS (
                SELECT owned.id FROM owned, others, margin
                WHERE \(Self.gateOpen) AND (others.free >= \(quantity) OR \(mayGoShort))
            ), position_after AS (
                INSERT INTO holdings AS h (portfolio_id, symbol, quantity, cost_basis)
                SELECT id, \(order.symbol), -\(quantity), -\(order.amount) FROM allowed
                ON CONFLICT (portfolio_id, symbol) DO UPDATE SET
                    quantity = h.quantity - \(quantity),
                    reserved_quantity = h.reserved_quantity - \(released),
                    cost_basis = CASE WHEN h.quantity >= \(quantity) THEN cost_basis_kept(h.cost_basis, h.quantity, h.quantity - \(quantity))
                                      WHEN h.quantity <= 0 THEN h.cost_basis - \(order.amount)
                                      ELSE \(order.price) * (h.quantity - \(quantity)) END
                RETURNING h.portfolio_id, h.quantity
            ), \(saleCash(order)),
            \(tradeRow(.sell, order, realizedGain: gain, from: "cash_after, position_before b"))\(ending(.sell, order, refusal: refusal))
            """
    }
}
