import Foundation
import Postgres

/// Open orders and their reservations: placing, closing (cancel, expiry, rejection),
/// finding the ones the price crosses, and reading them. Fills go through
/// `TradeStatement`, the one statement that moves cash and shares.
struct OrderStore: Sendable {
    let pool: PostgresConnectionPool

    struct OrderRecord: Sendable {
        let id: Int
        let clientOrderID: String?
        let portfolioID: Int
        let symbol: String
        let side: TradeSide
        let type: OrderType
        let quantity: Int
        let limitPrice: Decimal?
        let stopPrice: Decimal?
        let timeInForce: TimeInForce
        let status: OrderStatus
        let fillPrice: Decimal?
        let tradeID: Int?
        let createdAt: Date
        let updatedAt: Date
        let filledAt: Date?
        let canceledAt: Date?
        let expiredAt: Date?
        let rejectReason: String?
        let requestHash: String?
        /// How `/v2` names the order.
        let uuid: String
        /// The order this one replaced, and the one that replaced it (ids and UUIDs).
        let replaces: Int?
        let replacedBy: Int?
        let replacedAt: Date?
        let replacesUUID: String?
        let replacedByUUID: String?
        /// The instrument's UUID (`/v2`'s asset id).
        let assetUUID: String?
        /// The trader's journal note.
        let note: String?
        /// Who placed it (a team's portfolio is traded by its members).
        var placedBy: Int? = nil
        /// A trailing stop's trail (a percentage or an amount) and the best price since it
        /// was placed; `stopPrice` is the stop they make now.
        var trailPercent: Decimal? = nil
        var trailPrice: Decimal? = nil
        var hwm: Decimal? = nil
        /// The shares filled so far (partial fills and the last), at `fillPrice` on average.
        var filledQuantity = 0
        /// Its class; a leg's parent; a parent's legs (read with it).
        var orderClass = OrderClass.simple
        var parentID: Int? = nil
        var legs: [OrderRecord] = []
    }

    /// The stop a trailing stop makes from the best price `best` (SQL `trailing_stop`).
    func trailingStop(_ side: TradeSide, best: Decimal, percent: Decimal?, amount: Decimal?) async throws -> Decimal {
        try await pool.query("SELECT trailing_stop(\(side), \(best), \(percent)::numeric, \(amount)::numeric)")
            .decodeColumn(Decimal.self)[0]
    }

    /// What an open order holds back until it fills or closes.
    struct Reservation: Sendable {
        let cash: Decimal
        let shares: Int
        /// A sale that may go short holds back only the shares free now (maybe none).
        var sharesFreeOnly = false
    }

    /// What the placing statement did: its outcome, the order it opened, and whether the
    /// current price may already fill that order (only then is the matcher asked).
    struct Placed: Sendable {
        let outcome: TradeOutcome
        let id: Int?
        let mayFillNow: Bool
        /// The legs written with it.
        var legs: [Int] = []
    }

    /// Opens an order in one statement: the reservation is added only if the buying power
    /// (cash not yet reserved) or the free shares cover it — checked by the row update
    /// itself, so no interleaving of orders and trades can promise the same cash twice.
    /// (A sale that may go short holds back the free shares it has; its fill checks the
    /// margin for the rest.)
    /// A league portfolio's orders expire at the latest when its league ends.
    ///
    /// An order with legs (`OrderTicket.legs`) writes them in the same transaction, after it.
    func place(_ ticket: OrderTicket, userID: Int, reservation: Reservation, expiresAt: Date?) async throws -> Placed {
        guard !ticket.legs.isEmpty else {
            return try await placing(ticket, userID: userID) { account in
                try Placed(await pool.queryRetryingTransientFailures(
                    Self.placement(ticket, userID: account, placer: userID, reservation: reservation, expiresAt: expiresAt, replaces: nil)
                )[0])
            }
        }
        return try await placing(ticket, userID: userID) { account in
            try await pool.withTransaction { session in
                var placed = try Placed(await session.query(
                    Self.placement(ticket, userID: account, placer: userID, reservation: reservation, expiresAt: expiresAt, replaces: nil)
                )[0])
                guard placed.outcome == .ok, let id = placed.id else { return placed }
                placed.legs = try await Self.writeLegs(ticket, parentID: id, in: session)
                return placed
            }
        }
    }

    /// Writes the legs of the order `parentID` (placed from `ticket`): sales of its
    /// quantity, with its time in force and expiry, note and placer. A bracket's and an
    /// OTO's wait (`held`) until it fills; an OCO's stop-loss is open at once, holding
    /// nothing (its take-profit, the order itself, holds the shares). A pair — a bracket's
    /// two legs, an OCO's take-profit and stop-loss — name each other. Returns the legs' ids.
    private static func writeLegs(_ ticket: OrderTicket, parentID: Int, in session: PostgresSession) async throws -> [Int] {
        let status: OrderStatus = ticket.orderClass == .oco ? .new : .held
        var ids: [Int] = []
        for leg in ticket.legs {
            ids += try await session.query(
                """
                INSERT INTO orders (user_id, portfolio_id, symbol, side, type, time_in_force, quantity, limit_price, stop_price, status,
                                    expires_at, note, by_key, placed_by, order_class, parent_id)
                SELECT p.user_id, p.portfolio_id, p.symbol, \(TradeSide.sell), \(leg.type), p.time_in_force, p.quantity,
                       \(leg.limitPrice)::numeric, \(leg.stopPrice)::numeric, \(status), p.expires_at, p.note, p.by_key, p.placed_by,
                       p.order_class, p.id
                FROM orders p WHERE p.id = \(parentID)
                RETURNING id
                """
            ).decodeColumn(Int.self)
        }
        let pair = ticket.orderClass == .oco ? [parentID] + ids : ids
        if pair.count == 2 {
            try await session.execute(
                "UPDATE orders SET sibling_id = CASE id WHEN \(pair[0]) THEN \(pair[1]) ELSE \(pair[0]) END WHERE id IN (\(pair[0]), \(pair[1]))"
            )
        }
        return ids
    }

    /// How placing `ticket` with `reservation` would turn out now: the placing statement
    /// itself, in a transaction that is always rolled back (its `clientOrderId` left out,
    /// so a preview never meets the order it previews).
    func wouldPlace(_ ticket: OrderTicket, userID: Int, reservation: Reservation) async throws -> TradeOutcome {
        var ticket = ticket
        ticket.clientOrderID = nil
        return try await placing(ticket, userID: userID) { account in
            try await pool.withTransaction { session in
                let placed = try Placed(await session.query(
                    Self.placement(ticket, userID: account, placer: userID, reservation: reservation, expiresAt: nil, replaces: nil)
                )[0])
                throw Refused(outcome: placed.outcome)
            }
        }.outcome
    }

    /// Replaces an open order with `ticket` in one transaction: the old order closes as
    /// `replaced` (releasing its reservation), the new one is placed with its own, and
    /// each names the other. Nothing changes unless the new order can be placed; an order
    /// no longer open is `orderNotOpen`.
    func replace(
        _ orderID: Int, with ticket: OrderTicket, userID: Int, reservation: Reservation, expiresAt: Date?
    ) async throws -> Placed {
        // A team's order is replaced as the team's account, by one of its traders; its viewers
        // may not, and one whose seat went since the caller looked it up no longer sees it.
        guard let account = try await orderHolder(id: orderID, userID: userID, trading: true) else {
            throw try await refusal(ofOrder: orderID, userID: userID)
        }
        return try await placing {
            try await pool.withTransaction { session in
                guard !(try await session.query(Self.closing(.usersOrder(userID: account, id: orderID), as: .replaced, reason: nil))).isEmpty else {
                    throw TradingError.orderNotOpen
                }
                let placed = try Placed(await session.query(
                    Self.placement(ticket, userID: account, placer: userID, reservation: reservation, expiresAt: expiresAt, replaces: orderID)
                )[0])
                guard placed.outcome == .ok, let newID = placed.id else { throw Refused(outcome: placed.outcome) }
                try await session.execute("UPDATE orders SET replaced_by = \(newID) WHERE id = \(orderID)")
                return placed
            }
        }
    }

    /// A placement to undo (a replacement that could not be placed, any preview): thrown to
    /// roll its transaction back.
    private struct Refused: Error {
        let outcome: TradeOutcome
    }

    /// Runs a placing `body` as the user (`account`), and when it names a team's portfolio
    /// that is none of theirs, once more as the team's account if they trade for it
    /// (`PortfolioAccess`); a viewer's is `not_a_trader`.
    private func placing(_ ticket: OrderTicket, userID: Int, _ body: (_ account: Int) async throws -> Placed) async throws -> Placed {
        let placed = try await placing { try await body(userID) }
        guard placed.outcome == .notFound, let portfolioID = ticket.portfolioID,
              let seat = try await PortfolioAccess.seat(userID: userID, portfolioID: portfolioID, run: pool.query)
        else { return placed }
        guard seat.trader else { return Placed(outcome: .notATrader, id: nil, mayFillNow: false) }
        return try await placing { try await body(seat.account) }
    }

    private func placing(_ body: () async throws -> Placed) async throws -> Placed {
        do {
            return try await body()
        } catch let refused as Refused {
            return Placed(outcome: refused.outcome, id: nil, mayFillNow: false)
        } catch let error as PostgresError where error.code == .uniqueViolation && error.constraint == "orders_client_order_id" {
            // The same clientOrderId placed at the same moment: the other request won.
            throw TradingError.idempotencyKeyInFlight
        }
    }

    private static func placement(
        _ ticket: OrderTicket, userID: Int, placer: Int, reservation: Reservation, expiresAt: Date?, replaces: Int?
    ) -> PostgresQuery {
        let reserve: PostgresQuery = switch (ticket.side, reservation.sharesFreeOnly) {
        case (.buy, _):
            """
            reserved AS (
                UPDATE portfolios p SET reserved_cash = p.reserved_cash + \(reservation.cash)
                FROM owned WHERE p.id = owned.id AND \(TradeStatement.gateOpen) AND buying_power(p.cash, p.reserved_cash) >= \(reservation.cash)
                RETURNING p.id, \(reservation.cash)::numeric AS cash, 0::int8 AS shares
            )
            """
        case (.sell, false):
            """
            reserved AS (
                UPDATE holdings h SET reserved_quantity = h.reserved_quantity + \(reservation.shares)
                FROM owned WHERE h.portfolio_id = owned.id AND \(TradeStatement.gateOpen) AND h.symbol = \(ticket.symbol)
                  AND free_shares(h.quantity, h.reserved_quantity) >= \(reservation.shares)
                RETURNING h.portfolio_id AS id, 0::numeric AS cash, \(reservation.shares)::int8 AS shares
            )
            """
        case (.sell, true):
            """
            free AS (
                SELECT h.portfolio_id, least(\(reservation.shares), greatest(free_shares(h.quantity, h.reserved_quantity), 0)) AS shares
                FROM holdings h JOIN owned ON h.portfolio_id = owned.id
                WHERE \(TradeStatement.gateOpen) AND h.symbol = \(ticket.symbol)
                FOR UPDATE OF h
            ), held_back AS (
                UPDATE holdings h SET reserved_quantity = h.reserved_quantity + free.shares
                FROM free WHERE h.portfolio_id = free.portfolio_id AND h.symbol = \(ticket.symbol) AND free.shares > 0
            ), reserved AS (
                SELECT owned.id, 0::numeric AS cash, coalesce((SELECT shares FROM free), 0)::int8 AS shares
                FROM owned WHERE \(TradeStatement.gateOpen)
            )
            """
        }
        let refusal: TradeOutcome = ticket.side == .buy ? .insufficientFunds : .insufficientShares
        // A replacement of a key's order is the key's too, wherever it was sent.
        let byKey: PostgresQuery = if let replaces {
            "\(ticket.byKey) OR (SELECT by_key FROM orders WHERE id = \(replaces))"
        } else {
            "\(ticket.byKey)"
        }
        // A trailing stop starts from the price now: its best so far, and the stop it makes.
        let trail: (columns: PostgresQuery, values: PostgresQuery, stop: PostgresQuery) = if ticket.type == .trailingStop {
            (", trail_percent, trail_price, hwm",
             ", \(ticket.trailPercent)::numeric, \(ticket.trailPrice)::numeric, (SELECT price FROM now_price)",
             "trailing_stop(\(ticket.side), (SELECT price FROM now_price), \(ticket.trailPercent)::numeric, \(ticket.trailPrice)::numeric)")
        } else {
            ("", "", "\(ticket.stopPrice)::numeric")
        }
        let nowPrice: PostgresQuery = ticket.type == .trailingStop
            ? "now_price AS (SELECT price FROM current_prices WHERE symbol = \(ticket.symbol)), " : ""
        return """
            WITH \(nowPrice)\(TradeStatement.owned(userID: userID, portfolioID: ticket.portfolioID,
                                        noted: ticket.note != nil || ticket.journalExempt,
                                        keyForbidden: ticket.byKey || replaces != nil ? "(\(byKey)) AND \(TradeStatement.keyForbidden)" : "false",
                                        extra: ", l.ends_at")),
            \(reserve), placed AS (
                INSERT INTO orders (user_id, portfolio_id, client_order_id, request_hash, symbol, side, type, time_in_force,
                                    quantity, limit_price, stop_price, reserved_cash, reserved_quantity, expires_at, replaces, note, by_key,
                                    placed_by, order_class\(trail.columns))
                SELECT (SELECT account FROM owned), reserved.id, \(ticket.clientOrderID)::text, \(ticket.requestHash), \(ticket.symbol), \(ticket.side),
                       \(ticket.type), \(ticket.timeInForce), \(ticket.quantity), \(ticket.limitPrice)::numeric,
                       \(trail.stop), reserved.cash, reserved.shares,
                       least(\(expiresAt)::timestamptz, (SELECT ends_at FROM owned)), \(replaces)::int8, \(ticket.note)::text,
                       \(byKey), \(placer)::int8, \(ticket.orderClass)\(trail.values)
                FROM reserved
                RETURNING id, symbol, side, type, limit_price, stop_price
            )
            SELECT \(TradeStatement.gateOutcome(written: "placed", refusal: "\(refusal)")),
                   (SELECT id FROM placed),
                   coalesce((SELECT \(Self.crossed(stopLimit: Self.stopCrossed))
                             FROM placed o JOIN current_prices p ON p.symbol = o.symbol), false)
            """
    }

    /// Which open orders a close applies to.
    enum Selection {
        case one(id: Int)
        case usersOrder(userID: Int, id: Int)
        case portfolio(id: Int)
        /// Day orders past their session's close and league orders past their league's end,
        /// at the market's time.
        case due(at: Date)
        /// Day orders of scenario leagues whose league day has ended (`league_day_ended`).
        case leagueDayEnded
        /// Orders of portfolios taken away (left or kicked from a league, or its deletion).
        case ofClosedPortfolios
        /// The orders of a portfolio just archived, skipping any being filled right now
        /// (that fill finds the portfolio gone, and the order is closed then).
        case ofArchived(portfolioID: Int)
        /// Orders an API key placed on portfolios whose league now forbids keys
        /// (`api_keys_forbidden_portfolios`): of this league's portfolios, or of any.
        case placedByForbiddenKeys(leagueID: Int?)
    }

    /// Why an order an API key placed was cancelled when its league came to forbid keys.
    static let botsForbiddenReason = "The league no longer lets API keys or bots trade its portfolios."

    /// Closes open orders (cancelled, expired or rejected) and releases what they
    /// reserved, in one statement. An order being filled at this moment is waited for
    /// and then left alone (it is no longer open); the expiry skips orders another
    /// process is closing. Returns the ids closed.
    @discardableResult
    func close(_ selection: Selection, as status: OrderStatus, reason: String? = nil) async throws -> [Int] {
        try await pool.queryRetryingTransientFailures(Self.closing(selection, as: status, reason: reason)).decodeColumn(Int.self)
    }

    /// The closing statement, for a caller that closes orders inside its own transaction.
    static func closing(_ selection: Selection, as status: OrderStatus, reason: String?) -> PostgresQuery {
        let (criteria, lock): (PostgresQuery, PostgresQuery) = switch selection {
        case .one(let id): ("o.id = \(id)", "FOR UPDATE")
        case .usersOrder(let userID, let id): ("o.id = \(id) AND o.user_id = \(userID)", "FOR UPDATE")
        case .portfolio(let id): ("o.portfolio_id = \(id)", "FOR UPDATE")
        case .due(let moment): ("o.expires_at <= \(moment)", "LIMIT 1000 FOR UPDATE SKIP LOCKED")
        case .leagueDayEnded: ("league_day_ended(o.symbol, o.time_in_force, o.created_at)", "LIMIT 1000 FOR UPDATE SKIP LOCKED")
        case .ofClosedPortfolios:
            ("EXISTS (SELECT 1 FROM portfolios p WHERE p.id = o.portfolio_id AND p.archived_at IS NOT NULL)",
             "LIMIT 1000 FOR UPDATE SKIP LOCKED")
        case .ofArchived(let portfolioID): ("o.portfolio_id = \(portfolioID)", "FOR UPDATE SKIP LOCKED")
        case .placedByForbiddenKeys(let leagueID?):
            ("o.by_key AND o.portfolio_id IN (SELECT portfolio_id FROM league_portfolios(\(leagueID))) AND \(Self.keyForbidden)",
             "FOR UPDATE SKIP LOCKED")
        case .placedByForbiddenKeys(nil):
            ("o.by_key AND \(Self.keyForbidden)", "LIMIT 1000 FOR UPDATE SKIP LOCKED")
        }
        // The orders are picked and locked here; SQL `close_orders` closes them and releases
        // what they hold.
        // An order closes with the legs that wait for it and the sibling it would cancel.
        return """
            WITH picked AS (
                SELECT o.id, o.sibling_id FROM orders o
                WHERE o.status = 'new' AND \(criteria)
                ORDER BY o.id \(lock)
            ), related AS (
                SELECT r.id FROM orders r
                WHERE r.status IN ('new', 'held') AND r.id NOT IN (SELECT id FROM picked)
                  AND (r.parent_id IN (SELECT id FROM picked) OR r.id IN (SELECT sibling_id FROM picked))
                ORDER BY r.id FOR UPDATE
            )
            SELECT id FROM close_orders(ARRAY(SELECT id FROM picked UNION ALL SELECT id FROM related), \(status), \(reason)::text) AS id
            """
    }

    /// Whether the order `o` is not of a frozen league's portfolio: those wait, neither
    /// filled nor triggered, until the league is unfrozen.
    private static let notFrozen: PostgresQuery =
        "o.portfolio_id NOT IN (SELECT f.id FROM portfolios f JOIN leagues l ON l.id = f.league_id WHERE league_frozen(l))"

    /// Whether the order `o` is on a portfolio no API key may trade: a set read once per
    /// statement (a call per order cost 10× the matcher's query with 10,000 key orders).
    private static let keyForbidden: PostgresQuery = "o.portfolio_id IN (SELECT portfolio_id FROM api_keys_forbidden_portfolios())"

    /// Whether the order `o` may still fill as far as the league's bot policy goes: an
    /// order an API key placed does not fill on a portfolio whose league forbids keys
    /// (the sweep cancels it). Orders placed by hand are not asked.
    private static let keyAllowed: PostgresQuery = "NOT (o.by_key AND \(keyForbidden))"

    /// Whether the price `p.price` crosses the order `o`'s stop or limit: the one
    /// definition the matcher and placing share (NULL for an order without one).
    private static let stopCrossed: PostgresQuery = "CASE o.side WHEN 'buy' THEN p.price >= o.stop_price ELSE p.price <= o.stop_price END"
    private static let limitCrossed: PostgresQuery = "CASE o.side WHEN 'buy' THEN p.price <= o.limit_price ELSE p.price >= o.limit_price END"

    /// Whether the price `p.price` fills the order `o` by its type; a stop-limit order
    /// fills when `stopLimit` holds (placing: its stop is crossed, so the matcher triggers
    /// it; matching: it is triggered and its limit crossed).
    private static func crossed(stopLimit: PostgresQuery) -> PostgresQuery {
        """
        CASE o.type
            WHEN 'market' THEN true
            WHEN 'stop' THEN \(stopCrossed)
            WHEN 'trailing_stop' THEN \(stopCrossed)
            WHEN 'limit' THEN \(limitCrossed)
            ELSE \(stopLimit) END
        """
    }

    /// An open order the current price lets fill, with that price.
    struct Fillable: Sendable {
        let id: Int
        let userID: Int
        let portfolioID: Int
        let symbol: String
        let side: TradeSide
        /// What it has left to fill.
        let quantity: Int
        let price: Decimal
        /// A limit order's (or a triggered stop-limit's) limit, which the fill's price
        /// under the league's rules may not pass either.
        let limitPrice: Decimal?
        /// A leg's sibling, which its fill cancels; whether it is an entry whose fill opens its legs.
        var siblingID: Int? = nil
        var opensLegs = false
    }

    /// The open orders the current prices cross (of these symbols, or this order, or all):
    /// the one definition of when an order fills. Stop-limit orders whose stop is crossed
    /// are marked triggered first: from then on they are limit orders.
    /// An order past its expiry at `now` (the sweep expires it next) fills no more.
    /// `leaguesOnly`: only scenario leagues' orders (`Symbol.isLeagues`), while the market is closed.
    func fillable(symbols: [String]?, orderID: Int?, at now: Date, leaguesOnly: Bool = false) async throws -> [Fillable] {
        // One statement shape per scope, so each is planned with its own index (a scope
        // written as "($1 IS NULL OR …)" is planned once for every case: a scan of orders).
        let all: PostgresQuery = if let orderID {
            "o.status = 'new' AND o.id = \(orderID)"
        } else if let symbols {
            "o.status = 'new' AND o.symbol = ANY(\(symbols)::text[])"
        } else {
            "o.status = 'new'"
        }
        let scope: PostgresQuery = leaguesOnly ? "\(all) AND symbol_shown(o.symbol) <> o.symbol" : all
        let rows = try await pool.queryRetryingTransientFailures(
            """
            WITH triggered AS (
                UPDATE orders o SET triggered_at = now(), updated_at = now()
                FROM current_prices p
                WHERE \(scope) AND o.type = 'stop_limit' AND o.triggered_at IS NULL AND p.symbol = o.symbol AND \(Self.stopCrossed)
                  AND \(Self.notFrozen) AND \(Self.keyAllowed)
                RETURNING o.id
            ), trailed AS (
                -- A trailing stop follows a new best price (it is then not crossed: the
                -- crossing below reads the stop before this update).
                UPDATE orders o SET hwm = p.price, stop_price = trailing_stop(o.side, p.price, o.trail_percent, o.trail_price),
                                    updated_at = now()
                FROM current_prices p
                WHERE \(scope) AND o.type = 'trailing_stop' AND p.symbol = o.symbol
                  AND CASE o.side WHEN 'sell' THEN p.price > o.hwm ELSE p.price < o.hwm END
                  AND \(Self.notFrozen) AND \(Self.keyAllowed)
                RETURNING o.id
            )
            SELECT o.id, o.user_id, o.portfolio_id, o.symbol, o.side, o.quantity - o.filled_quantity, p.price, o.limit_price,
                   o.sibling_id, o.order_class IN ('bracket', 'oto') AND o.parent_id IS NULL
            FROM orders o JOIN current_prices p ON p.symbol = o.symbol
            WHERE \(scope) AND p.price IS NOT NULL AND (o.expires_at IS NULL OR o.expires_at > \(now))
              AND NOT league_day_ended(o.symbol, o.time_in_force, o.created_at)
              -- A frozen league's orders wait, unfilled (and untriggered), until it is unfrozen.
              AND \(Self.notFrozen) AND \(Self.keyAllowed)
              AND \(Self.crossed(stopLimit: "(o.triggered_at IS NOT NULL OR o.id IN (SELECT id FROM triggered)) AND \(Self.limitCrossed)"))
            ORDER BY o.id
            """
        )
        return try rows.decode((Int, Int, Int, String, TradeSide, Int, Decimal, Decimal?, Int?, Bool).self).map {
            Fillable(id: $0.0, userID: $0.1, portfolioID: $0.2, symbol: $0.3, side: $0.4, quantity: $0.5, price: $0.6, limitPrice: $0.7,
                     siblingID: $0.8, opensLegs: $0.9)
        }
    }

    // MARK: Reading

    /// Every order, plain market trades included, from the one definition (`order_book`).
    private static let columns: PostgresQuery = """
        SELECT o.id, o.client_order_id, o.portfolio_id, o.symbol, o.side, o.type, o.quantity, o.limit_price, o.stop_price,
               o.time_in_force, o.status, o.fill_price, o.trade_id, o.created_at, o.updated_at, o.filled_at, o.canceled_at,
               o.expired_at, o.reject_reason, o.request_hash, o.uuid::text, o.replaces, o.replaced_by, o.replaced_at,
               o.replaces_uuid::text, o.replaced_by_uuid::text, o.asset_uuid::text, o.note, o.placed_by,
               o.trail_percent, o.trail_price, o.hwm, o.filled_quantity, o.order_class, o.parent_id
        FROM order_book o
        """

    private static func record(_ row: PostgresRow) throws -> OrderRecord {
        OrderRecord(
            id: try row.decode(Int.self, column: "id"), clientOrderID: try row.decode(String?.self, column: "client_order_id"),
            portfolioID: try row.decode(Int.self, column: "portfolio_id"), symbol: try row.decode(String.self, column: "symbol"),
            side: try row.decode(TradeSide.self, column: "side"), type: try row.decode(OrderType.self, column: "type"),
            quantity: try row.decode(Int.self, column: "quantity"), limitPrice: try row.decode(Decimal?.self, column: "limit_price"),
            stopPrice: try row.decode(Decimal?.self, column: "stop_price"),
            timeInForce: try row.decode(TimeInForce.self, column: "time_in_force"),
            status: try row.decode(OrderStatus.self, column: "status"), fillPrice: try row.decode(Decimal?.self, column: "fill_price"),
            tradeID: try row.decode(Int?.self, column: "trade_id"), createdAt: try row.decode(Date.self, column: "created_at"),
            updatedAt: try row.decode(Date.self, column: "updated_at"), filledAt: try row.decode(Date?.self, column: "filled_at"),
            canceledAt: try row.decode(Date?.self, column: "canceled_at"), expiredAt: try row.decode(Date?.self, column: "expired_at"),
            rejectReason: try row.decode(String?.self, column: "reject_reason"),
            requestHash: try row.decode(String?.self, column: "request_hash"),
            uuid: try row.decode(String.self, column: "uuid"), replaces: try row.decode(Int?.self, column: "replaces"),
            replacedBy: try row.decode(Int?.self, column: "replaced_by"), replacedAt: try row.decode(Date?.self, column: "replaced_at"),
            replacesUUID: try row.decode(String?.self, column: "replaces_uuid"),
            replacedByUUID: try row.decode(String?.self, column: "replaced_by_uuid"),
            assetUUID: try row.decode(String?.self, column: "asset_uuid"), note: try row.decode(String?.self, column: "note"),
            placedBy: try row.decode(Int?.self, column: "placed_by"),
            trailPercent: try row.decode(Decimal?.self, column: "trail_percent"),
            trailPrice: try row.decode(Decimal?.self, column: "trail_price"), hwm: try row.decode(Decimal?.self, column: "hwm"),
            filledQuantity: try row.decode(Int.self, column: "filled_quantity"),
            orderClass: try row.decode(OrderClass.self, column: "order_class"), parentID: try row.decode(Int?.self, column: "parent_id")
        )
    }

    /// `records` with the legs of those that have legs (a bracket's or OTO's entry, an
    /// OCO's take-profit): one more query, only when some have.
    private func withLegs(_ records: [OrderRecord]) async throws -> [OrderRecord] {
        let parents = records.filter { $0.orderClass != .simple && $0.parentID == nil }.map(\.id)
        guard !parents.isEmpty else { return records }
        let legs = try await pool.query("\(Self.columns) WHERE o.parent_id = ANY(\(parents)) ORDER BY o.id").map(Self.record)
        return records.map { record in
            var record = record
            record.legs = legs.filter { $0.parentID == record.id }
            return record
        }
    }

    private func withLegs(_ record: OrderRecord?) async throws -> OrderRecord? {
        guard let record else { return nil }
        return try await withLegs([record])[0]
    }

    /// One of the orders the user sees (with `trading`, of those they trade: `PortfolioAccess`).
    func order(userID: Int, id: Int, trading: Bool = false) async throws -> OrderRecord? {
        try await holder(ofOrder: id, userID: userID, trading: trading) { holder in
            try await withLegs(pool.query("\(Self.columns) WHERE o.id = \(id) AND o.user_id = \(holder)").first.map(Self.record))
        }
    }

    /// Whose order it is as `userID` may act on it: theirs, or a team's account's for a
    /// team's order they see (trade, with `trading`); nil otherwise.
    func orderHolder(id: Int, userID: Int, trading: Bool) async throws -> Int? {
        try await holder(ofOrder: id, userID: userID, trading: trading) { holder in
            // The order book: a plain market trade is an order too, as clients see it.
            try await pool.query("SELECT user_id FROM order_book WHERE id = \(id) AND user_id = \(holder) LIMIT 1").decodeColumn(Int.self).first
        }
    }

    /// Why `userID` may not act on an order it has no trading hold of (`orderHolder`): a
    /// team's viewer, who sees it, is `notATrader`; anyone else (one whose seat went
    /// meanwhile too) does not see it at all, `noSuchOrder`.
    func refusal(ofOrder id: Int, userID: Int) async throws -> TradingError {
        try await order(userID: userID, id: id) == nil ? .noSuchOrder : .notATrader
    }

    /// Runs `lookup` as the user, and for an order of a team's portfolio they are on (trade,
    /// with `trading`), once more as the team's account.
    func holder<T>(ofOrder id: Int, userID: Int, trading: Bool, _ lookup: (_ holder: Int) async throws -> T?) async throws -> T? {
        if let found = try await lookup(userID) { return found }
        for portfolioID in try await pool.query("SELECT portfolio_id FROM order_book WHERE id = \(id)").decodeColumn(Int.self) {
            if let found = try await PortfolioAccess.resolving(userID: userID, portfolioID: portfolioID, trading: trading, run: pool.query, { holder in
                holder == userID ? nil : try await lookup(holder)
            }) {
                return found
            }
        }
        return nil
    }

    func order(userID: Int, clientOrderID: String) async throws -> OrderRecord? {
        // Its placer's: on their own portfolios or a team's they trade for.
        try await withLegs(pool.query(
            "\(Self.columns) WHERE \(PortfolioAccess.traded("o.user_id", userID: userID)) AND o.placed_by = \(userID) AND o.client_order_id = \(clientOrderID)"
        )
            .first.map(Self.record))
    }

    func orders(ids: [Int]) async throws -> [OrderRecord] {
        try await withLegs(pool.query("\(Self.columns) WHERE o.id = ANY(\(ids)) ORDER BY o.id DESC").map(Self.record))
    }

    /// The user's open orders in every portfolio, newest first.
    func openOrders(userID: Int) async throws -> [OrderRecord] {
        try await withLegs(pool.query("\(Self.columns) WHERE o.user_id = \(userID) AND o.status IN ('new', 'held') ORDER BY o.id DESC LIMIT 500")
            .map(Self.record))
    }

    /// One of the user's orders by its UUID.
    func order(userID: Int, uuid: UUID) async throws -> OrderRecord? {
        try await withLegs(pool.query("\(Self.columns) WHERE o.uuid = \(uuid.uuidString.lowercased())::uuid AND o.user_id = \(userID)")
            .first.map(Self.record))
    }

    /// Which orders a listing shows.
    enum Listing: String {
        case open, closed, all
    }

    /// Orders of one portfolio created in (after, until), of any of `symbols` (nil: all),
    /// by creation time in either direction: Alpaca's listing.
    func orders(
        portfolioID: Int, listing: Listing, symbols: [String]?, side: TradeSide?, after: Date?, until: Date?, ascending: Bool, limit: Int
    ) async throws -> [OrderRecord] {
        let status: PostgresQuery = switch listing {
        case .open: "AND o.status IN ('new', 'held')"
        case .closed: "AND o.status NOT IN ('new', 'held')"
        case .all: ""
        }
        let order: PostgresQuery = ascending ? "ORDER BY o.created_at, o.id" : "ORDER BY o.created_at DESC, o.id DESC"
        return try await withLegs(pool.query(
            """
            \(Self.columns)
            WHERE o.portfolio_id = \(portfolioID) \(status)
              AND (\(symbols)::text[] IS NULL OR o.symbol = ANY(\(symbols)::text[]))
              AND (\(side?.rawValue)::text IS NULL OR o.side::text = \(side?.rawValue)::text)
              AND (\(after)::timestamptz IS NULL OR o.created_at > \(after)::timestamptz)
              AND (\(until)::timestamptz IS NULL OR o.created_at < \(until)::timestamptz)
            \(order) LIMIT \(limit)
            """
        ).map(Self.record))
    }

    /// Orders of one portfolio, newest first, with ids below `before`.
    func orders(portfolioID: Int, listing: Listing, symbol: String?, before: Int?, limit: Int) async throws -> [OrderRecord] {
        let status: PostgresQuery = switch listing {
        case .open: "AND o.status IN ('new', 'held')"
        case .closed: "AND o.status NOT IN ('new', 'held')"
        case .all: ""
        }
        return try await withLegs(pool.query(
            """
            \(Self.columns)
            WHERE o.portfolio_id = \(portfolioID) \(status)
              AND (\(symbol)::text IS NULL OR o.symbol = \(symbol)::text)
              AND (\(before)::int8 IS NULL OR o.id < \(before)::int8)
            ORDER BY o.id DESC LIMIT \(limit)
            """
        ).map(Self.record))
    }
}

extension OrderStore.Placed {
    init(_ row: PostgresRow) throws {
        (outcome, id, mayFillNow) = try row.decode((TradeOutcome, Int?, Bool).self)
    }
}
