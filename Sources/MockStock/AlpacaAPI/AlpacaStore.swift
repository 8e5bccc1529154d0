import Foundation
import Postgres

/// What only the Alpaca-compatible API reads: the UUIDs accounts and assets are known by.
struct AlpacaStore: Sendable {
    let pool: PostgresConnectionPool
    /// Alpaca's time zone (`MarketHours.newYorkZone`, whatever the server's schedule): a
    /// daily bar is stamped at its day's start there, an activity dated by its day there.
    let zone: String
    /// Market data for bots, which may be a little stale, and a bot's account, which a
    /// replica holding every acknowledged commit may answer.
    var reads: StaleReads? = nil
    private var stale: StaleReads { reads ?? StaleReads(pool: pool) }

    struct AccountRecord: Sendable {
        let id: Int
        let uuid: String
        let createdAt: Date
        /// False when the portfolio's league is not running (it cannot trade now).
        let running: Bool
    }

    struct AssetRecord: Sendable {
        let uuid: String
        let symbol: String
        let name: String
        let active: Bool
    }

    /// An `AccountRecord`'s columns, of the portfolio `p` and its league `l`.
    private static let recordColumns: PostgresQuery =
        "p.id, p.uuid::text, p.created_at, trade_gate(l, now(), true, false) = \(TradeOutcome.ok)"

    /// Whether the portfolio `p` is the user's open one named `portfolioID` (nil: the personal one).
    private static func named(userID: Int, portfolioID: Int?) -> PostgresQuery {
        "p.user_id = \(userID) AND p.archived_at IS NULL AND portfolio_named(p.kind, p.id, \(portfolioID)::int8)"
    }

    /// The user's portfolio (nil: the personal one).
    func record(userID: Int, portfolioID: Int?) async throws -> AccountRecord? {
        try await pool.query(
            """
            SELECT \(Self.recordColumns) FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            WHERE \(Self.named(userID: userID, portfolioID: portfolioID))
            """
        ).decode((Int, String, Date, Bool).self).first.map { AccountRecord(id: $0.0, uuid: $0.1, createdAt: $0.2, running: $0.3) }
    }

    /// A portfolio as `/v2/account` shows it: its totals now, not its holdings.
    struct AccountSummary: Sendable {
        let record: AccountRecord
        /// The currency of every amount here.
        let currency: String
        let cash: Decimal
        let buyingPower: Decimal
        let netWorth: Decimal
        let longValue: Decimal
        /// Negative (short positions are worth less than nothing).
        let shortValue: Decimal
        let dayChange: Decimal
    }

    /// The user's portfolio (nil: the personal one) with its totals, in one statement over
    /// the valuation every reader shares (`holding_values`, net worth by `net_worth`): a
    /// bot polls it, and summed by PostgreSQL it is one row instead of one per holding. Read
    /// where `StaleReads` sends a poll that must show every acknowledged commit.
    func account(userID: Int, portfolioID: Int?) async throws -> AccountSummary? {
        let rows = try await stale.query(
            """
            SELECT \(Self.recordColumns),
                   p.cash_currency, p.cash, buying_power(p.cash, p.reserved_cash), net_worth(p.cash, sum(v.value)),
                   coalesce(sum(v.value) FILTER (WHERE v.quantity > 0), 0), coalesce(sum(v.value) FILTER (WHERE v.quantity < 0), 0),
                   coalesce(sum(v.day_change), 0), bool_or(v.price IS NULL AND v.symbol IS NOT NULL)
            FROM portfolios p LEFT JOIN leagues l ON l.id = p.league_id
            LEFT JOIN holding_values v ON v.portfolio_id = p.id
            WHERE \(Self.named(userID: userID, portfolioID: portfolioID))
            GROUP BY p.id, l.id
            """, everyCommit: true
        ).decode((Int, String, Date, Bool, String, Decimal, Decimal, Decimal, Decimal, Decimal, Decimal, Bool?).self)
        guard let row = rows.first else { return nil }
        try PortfolioValuation.requirePriced(currency: row.4, unpriced: row.11 ?? false)
        return AccountSummary(
            record: AccountRecord(id: row.0, uuid: row.1, createdAt: row.2, running: row.3), currency: row.4, cash: row.5,
            buyingPower: row.6, netWorth: row.7, longValue: row.8, shortValue: row.9, dayChange: row.10
        )
    }

    /// What an account's positions need under its league's margin rules, and what its
    /// equity may still buy (SQL `margin_needed`); asked for the accounts of leagues that
    /// lend or keep maintenance only.
    func marginNeeded(_ account: AccountSummary, rules: TradingRules) async throws -> (initial: Decimal, maintenance: Decimal, buyingPower: Decimal?) {
        let row = try await stale.query(
            """
            SELECT initial, maintenance, buying_power FROM margin_needed(
                \(account.longValue), \(-account.shortValue), \(rules.marginPercent)::numeric,
                \(rules.allowShortSelling ? rules.shortMarginPercent : nil)::numeric, \(rules.maintenancePercent)::numeric, \(account.netWorth))
            """
        )
        return try row[0].decode((Decimal, Decimal, Decimal?).self)
    }

    /// Instruments of a market (`league`: a scenario league's; nil: the real market's), by
    /// symbol; `active` nil for all.
    func assets(active: Bool?, league: Int?) async throws -> [AssetRecord] {
        try await stale.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE (\(active)::bool IS NULL OR active = \(active)::bool) AND league_id IS NOT DISTINCT FROM \(league)::int8
            ORDER BY symbol
            """
        ).map(Self.assetRecord)
    }

    private static func assetRecord(_ row: PostgresRow) throws -> AssetRecord {
        let (uuid, symbol, name, active) = try row.decode((String, String, String, Bool).self)
        return AssetRecord(uuid: uuid, symbol: symbol, name: name, active: active)
    }

    /// One instrument of a market (as `assets`) by symbol or by its UUID.
    func asset(symbolOrID: String, league: Int?) async throws -> AssetRecord? {
        let uuid = UUID(uuidString: symbolOrID)?.uuidString.lowercased()
        return try await stale.query(
            """
            SELECT uuid::text, symbol, name, active FROM instruments
            WHERE CASE WHEN \(uuid)::text IS NULL THEN symbol = \(Symbol.stored(symbolOrID.uppercased(), inLeague: league))
                       ELSE uuid = \(uuid)::uuid END
              AND league_id IS NOT DISTINCT FROM \(league)::int8
            """
        ).first.map(Self.assetRecord)
    }
}

extension AlpacaStore {
    /// A bar of `/v2/stocks/bars`: one day, week or month of one symbol.
    struct BarRecord: Sendable {
        let symbol: String
        let day: String
        let timestamp: String
        let open: Decimal
        let high: Decimal
        let low: Decimal
        let close: Decimal
        let volume: Int
    }

    /// Bars of `symbols` from `from` to `to` (days), adjusted as asked for the actions up to
    /// `through` (the replay day, or all), per `period` (`day`, `week`, `month`), by symbol
    /// then time, after the page position `after` (symbol, period's first day).
    func bars(
        symbols: [String], from: String, to: String, through: String?, adjusted: AdjustedHistory, period: String,
        after: (symbol: String, day: String)?, limit: Int
    ) async throws -> [BarRecord] {
        let rows = try await stale.query(
            """
            WITH raw AS (
                SELECT s.symbol, b.day, b.open, b.high, b.low, b.close, b.volume
                FROM unnest(\(symbols)::text[]) s (symbol)
                CROSS JOIN LATERAL adjusted_bars(s.symbol, \(from)::date, \(through)::date, \(adjusted)) b
                WHERE b.day <= \(to)::date AND (\(through)::date IS NULL OR b.day <= \(through)::date)
            ), periods AS (
                SELECT symbol, date_trunc(\(period), day)::date AS first_day,
                       (array_agg(coalesce(open, close) ORDER BY day))[1] AS open, max(coalesce(high, close)) AS high,
                       min(coalesce(low, close)) AS low, (array_agg(close ORDER BY day DESC))[1] AS close, sum(volume)::int8 AS volume
                FROM raw GROUP BY symbol, first_day
            )
            SELECT symbol, to_char(first_day, 'YYYY-MM-DD') AS bar_day,
                   utc_text(market_day_start(first_day, \(zone)), 0) AS bar_time,
                   open, high, low, close, volume
            FROM periods
            WHERE \(after?.symbol)::text IS NULL OR (symbol, first_day) > (\(after?.symbol)::text, \(after?.day)::date)
            ORDER BY symbol, first_day LIMIT \(limit)
            """
        )
        return try rows.map(Self.bar)
    }

    /// Bars of `seconds` (a minute to a day) from the stored minute bars in [from, to),
    /// by symbol and time; `after` is the last bar of the previous page (its epoch second).
    /// Volume is 0 (the game has none); `day` holds the bar's epoch second, for paging.
    func intradayBars(
        symbols: [String], from: Date, to: Date, seconds: Int, after: (symbol: String, epoch: Int)?, limit: Int
    ) async throws -> [BarRecord] {
        let rows = try await stale.query(
            """
            WITH periods AS (
                SELECT symbol, (floor(extract(epoch FROM minute) / \(seconds)) * \(seconds))::int8 AS epoch,
                       (array_agg(open ORDER BY minute))[1] AS open, max(high) AS high, min(low) AS low,
                       (array_agg(close ORDER BY minute DESC))[1] AS close
                FROM minute_bars
                WHERE symbol = ANY(\(symbols)::text[]) AND minute >= \(from) AND minute < \(to)
                GROUP BY 1, 2
            )
            SELECT symbol, epoch::text AS bar_day, utc_text(to_timestamp(epoch), 0) AS bar_time,
                   open, high, low, close, 0::int8 AS volume
            FROM periods
            WHERE \(after?.symbol)::text IS NULL OR (symbol, epoch) > (\(after?.symbol)::text, \(after?.epoch)::int8)
            ORDER BY symbol, epoch LIMIT \(limit)
            """
        )
        return try rows.map(Self.bar)
    }

    /// Each symbol's latest minute bar (of the seven days kept).
    func latestMinuteBars(symbols: [String]) async throws -> [BarRecord] {
        try await stale.query(
            """
            SELECT DISTINCT ON (symbol) symbol, extract(epoch FROM minute)::int8::text AS bar_day,
                   utc_text(minute, 0) AS bar_time, open, high, low, close, 0::int8 AS volume
            FROM minute_bars WHERE symbol = ANY(\(symbols)::text[])
            ORDER BY symbol, minute DESC
            """
        ).map(Self.bar)
    }

    /// Columns: symbol, bar_day, bar_time, open, high, low, close, volume.
    private static func bar(_ row: PostgresRow) throws -> BarRecord {
        BarRecord(
            symbol: try row.decode(String.self, column: "symbol"), day: try row.decode(String.self, column: "bar_day"),
            timestamp: try row.decode(String.self, column: "bar_time"), open: try row.decode(Decimal.self, column: "open"),
            high: try row.decode(Decimal.self, column: "high"), low: try row.decode(Decimal.self, column: "low"),
            close: try row.decode(Decimal.self, column: "close"), volume: try row.decode(Int.self, column: "volume")
        )
    }

    /// Each symbol's last `count` daily bars (up to `through`), as traded, newest first.
    func latestBars(symbols: [String], through: String?, count: Int = 1) async throws -> [BarRecord] {
        let rows = try await stale.query(
            """
            SELECT s.symbol, to_char(b.day, 'YYYY-MM-DD') AS bar_day,
                   utc_text(market_day_start(b.day, \(zone)), 0) AS bar_time,
                   coalesce(b.open, b.close) AS open, coalesce(b.high, b.close) AS high, coalesce(b.low, b.close) AS low,
                   b.close, b.volume
            FROM unnest(\(symbols)::text[]) s (symbol)
            CROSS JOIN LATERAL (
                SELECT * FROM daily_bars d
                WHERE d.symbol = s.symbol AND (\(through)::date IS NULL OR d.day <= \(through)::date)
                ORDER BY d.day DESC LIMIT \(count)
            ) b
            ORDER BY s.symbol, b.day DESC
            """
        )
        return try rows.map(Self.bar)
    }
}

extension AlpacaStore {
    /// An activity of the `activities` view, with the UUID of a fill's order.
    struct ActivityRecord: Sendable {
        let cursor: String
        let type: String
        let symbol: String?
        let side: TradeSide?
        let quantity: Int?
        let price: Decimal?
        let amount: Decimal?
        let note: String?
        let at: Date
        let day: String
        let orderUUID: String?
        /// A fill's: what made it and where its price came from.
        let madeBy: TradeSource?
        let pricing: FillPricing?
    }

    /// A portfolio's activities of `types` (our kinds; nil: all) in (after, until), by time
    /// either way, past the page position `cursor` ("time~source~id").
    func activities(
        portfolioID: Int, types: [String]?, after: Date?, until: Date?, ascending: Bool,
        cursor: (at: String, source: Int, id: Int)?, limit: Int
    ) async throws -> [ActivityRecord] {
        let order: PostgresQuery = ascending ? "ORDER BY a.at, a.source, a.id" : "ORDER BY a.at DESC, a.source DESC, a.id DESC"
        let past: PostgresQuery = ascending
            ? "(a.at, a.source, a.id) > (\(cursor?.at)::timestamptz, \(cursor?.source)::int, \(cursor?.id)::int8)"
            : "(a.at, a.source, a.id) < (\(cursor?.at)::timestamptz, \(cursor?.source)::int, \(cursor?.id)::int8)"
        let rows = try await pool.query(
            """
            SELECT activity_cursor(a.at, a.source, a.id) AS cursor,
                   a.type, a.symbol, a.side, a.quantity, a.price, a.amount, a.note, a.at, a.made_by, a.spread, a.impact,
                   market_day(a.at, \(zone))::text AS activity_day,
                   CASE WHEN a.source = 1 THEN coalesce(o.uuid, md5('mockstock-trade-' || a.id)::uuid)::text END AS order_uuid
            FROM activities a LEFT JOIN orders o ON a.source = 1 AND o.trade_id = a.id
            WHERE a.portfolio_id = \(portfolioID)
              AND (\(types)::text[] IS NULL OR a.type = ANY(\(types)::text[]))
              AND (\(after)::timestamptz IS NULL OR a.at > \(after)::timestamptz)
              AND (\(until)::timestamptz IS NULL OR a.at < \(until)::timestamptz)
              AND (\(cursor?.at)::timestamptz IS NULL OR \(past))
            \(order) LIMIT \(limit)
            """
        )
        return try rows.map { row in
            let side = try row.decode(TradeSide?.self, column: "side"), price = try row.decode(Decimal?.self, column: "price")
            let spread = try row.decode(Decimal?.self, column: "spread"), impact = try row.decode(Decimal?.self, column: "impact")
            return ActivityRecord(
                cursor: try row.decode(String.self, column: "cursor"), type: try row.decode(String.self, column: "type"),
                symbol: try row.decode(String?.self, column: "symbol"), side: side,
                quantity: try row.decode(Int?.self, column: "quantity"), price: price,
                amount: try row.decode(Decimal?.self, column: "amount"), note: try row.decode(String?.self, column: "note"),
                at: try row.decode(Date.self, column: "at"), day: try row.decode(String.self, column: "activity_day"),
                orderUUID: try row.decode(String?.self, column: "order_uuid"),
                madeBy: try row.decode(TradeSource?.self, column: "made_by"),
                pricing: FillPricing(activity: side, price: price, spread: spread, impact: impact)
            )
        }
    }
}
