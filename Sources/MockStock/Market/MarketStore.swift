import Foundation
import Postgres

/// Instruments, quotes, daily bars and minute bars.
struct MarketStore: Sendable {
    let pool: PostgresConnectionPool
    /// Lists, charts and statistics, which may be a little stale.
    var reads: StaleReads? = nil
    private var stale: StaleReads { reads ?? StaleReads(pool: pool) }

    /// Forgets minute bars older than seven days (run by `HousekeepingService`).
    func forgetOldMinuteBars() async throws {
        try await pool.execute("DELETE FROM minute_bars WHERE minute < now() - interval '7 days'")
    }

    /// The minute bars of `minute` (its start), of `symbols` or (nil) of every symbol.
    func minuteBars(at minute: Date, symbols: [String]?) async throws -> [MinuteBar] {
        try await pool.query(
            """
            SELECT symbol, open, high, low, close, ticks FROM minute_bars
            WHERE minute = \(minute) AND (\(symbols)::text[] IS NULL OR symbol = ANY(\(symbols)::text[]))
            ORDER BY symbol
            """
        ).map { row in
            let (symbol, open, high, low, close, ticks) = try row.decode((String, Decimal, Decimal, Decimal, Decimal, Int).self)
            return MinuteBar(symbol: symbol, minute: minute, open: open, high: high, low: low, close: close, ticks: ticks)
        }
    }

    /// An instrument with its current price from `instrument_prices`.
    struct PricedInstrument: Sendable {
        let name: String
        let quote: PriceQuote
    }

    enum Sort: String, CaseIterable {
        case symbol, symbolDescending = "-symbol", price, priceDescending = "-price", change, changeDescending = "-change"

        var orderBy: String {
            switch self {
            case .symbol: "symbol"
            case .symbolDescending: "symbol DESC"
            case .price: "price, symbol"
            case .priceDescending: "price DESC, symbol"
            case .change: "change_ratio, symbol"
            case .changeDescending: "change_ratio DESC, symbol"
            }
        }
    }

    private static let pricedColumns = "symbol, name, price, previous_close, as_of"

    /// Current prices: the `quotes` table by primary key, and the last daily close only
    /// for symbols without a quote.
    func prices(for symbols: [String]) async throws -> [String: PriceQuote] {
        guard !symbols.isEmpty else { return [:] }
        let rows = try await pool.query(
            "SELECT symbol, price, previous_close, as_of FROM quotes WHERE symbol = ANY(\(symbols))"
        )
        var prices: [String: PriceQuote] = [:]
        for row in rows {
            let (symbol, price, previous, asOf) = try row.decode((String, Decimal, Decimal?, Date).self)
            prices[symbol] = PriceQuote(symbol: symbol, price: price, previousClose: previous, asOf: asOf)
        }
        let unquoted = symbols.filter { prices[$0] == nil }
        guard !unquoted.isEmpty else { return prices }
        let fallback = try await pool.query(
            """
            SELECT \(unescaped: Self.pricedColumns) FROM instrument_prices
            WHERE symbol = ANY(\(unquoted)) AND price IS NOT NULL
            """
        )
        for row in fallback {
            let quote = try Self.priced(row).quote
            prices[quote.symbol] = quote
        }
        return prices
    }

    /// Stores quotes fetched from elsewhere; a quote without a previous close keeps the stored one.
    func saveQuotes(_ quotes: [PriceQuote], source: String) async throws {
        guard !quotes.isEmpty else { return }
        try await pool.execute(
            """
            INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
            SELECT symbol, price, previous_close, as_of, \(source)
            FROM unnest(\(quotes.map(\.symbol)), \(quotes.map(\.price)), \(quotes.map(\.previousClose)),
                        \(quotes.map(\.asOf))) AS input (symbol, price, previous_close, as_of)
            WHERE EXISTS (SELECT 1 FROM instruments i WHERE i.symbol = input.symbol)
            ON CONFLICT (symbol) DO UPDATE SET
                price = excluded.price, previous_close = coalesce(excluded.previous_close, q.previous_close),
                as_of = excluded.as_of, source = excluded.source
            """
        )
    }

    /// Read on the primary: it also says which symbols exist, for trades.
    func names(for symbols: [String]) async throws -> [String: String] {
        let rows = try await pool.query("SELECT symbol, name FROM instruments WHERE symbol = ANY(\(symbols))")
        return Dictionary(uniqueKeysWithValues: try rows.decode((String, String).self).map { ($0.0, $0.1) })
    }

    /// Active priced instruments whose ticker starts with `search` or one of whose name's
    /// words does, in `sort` order, with the total count for pagination (also past the end).
    func page(search: String, sort: Sort, limit: Int, offset: Int) async throws -> (items: [PricedInstrument], total: Int) {
        let term = search.trimmingCharacters(in: .whitespaces)
        let pattern = Self.escapeLike(term.lowercased()) + "%"
        let rows = try await stale.query(
            """
            WITH matched AS (
                SELECT *, (price - coalesce(previous_close, price)) / coalesce(previous_close, price) AS change_ratio
                FROM instrument_prices
                WHERE active AND price IS NOT NULL AND league_id IS NULL
                  AND (\(term) = '' OR lower(symbol) LIKE \(pattern)
                       OR EXISTS (SELECT 1 FROM regexp_split_to_table(lower(name), '[^[:alnum:]]+') AS word
                                  WHERE word LIKE \(pattern)))
            ), page AS (
                SELECT * FROM matched ORDER BY \(unescaped: sort.orderBy) LIMIT \(limit) OFFSET \(offset)
            )
            SELECT page.symbol, page.name, page.price, page.previous_close, page.as_of, total.count
            FROM (SELECT count(*) FROM matched) total LEFT JOIN page ON true
            ORDER BY \(unescaped: sort.orderBy)
            """
        )
        let total = try rows.first?.decode(Int.self, column: 5) ?? 0
        // Past the last page the one row carries only the total.
        let items = try rows.filter { try $0.decode(String?.self, column: 0) != nil }.map { try Self.priced($0) }
        return (items, total)
    }

    /// The biggest rises and falls of the day by percent; only rises are winners and only
    /// falls are losers.
    func movers(limit: Int) async throws -> (winners: [PricedInstrument], losers: [PricedInstrument]) {
        func select(_ condition: String, _ order: String) async throws -> [PricedInstrument] {
            let rows = try await stale.query(
                """
                SELECT \(unescaped: Self.pricedColumns) FROM instrument_prices
                WHERE active AND price IS NOT NULL AND previous_close IS NOT NULL AND league_id IS NULL AND \(unescaped: condition)
                ORDER BY (price - previous_close) / previous_close \(unescaped: order), symbol
                LIMIT \(limit)
                """
            )
            return try rows.map { try Self.priced($0) }
        }
        return (try await select("price > previous_close", "DESC"), try await select("price < previous_close", "ASC"))
    }

    struct InstrumentInfo: Sendable {
        let name: String
        let description: String
        let sector: String
        let currency: String
    }

    func instrument(_ symbol: String) async throws -> InstrumentInfo? {
        let rows = try await stale.query("SELECT name, description, sector, currency FROM instruments WHERE symbol = \(symbol)")
        return try rows.first.map {
            let (name, description, sector, currency) = try $0.decode((String, String, String, String).self)
            return InstrumentInfo(name: name, description: description, sector: sector, currency: currency)
        }
    }

    /// The first and last day of stored daily prices (up to `end`, the last day players
    /// may see), or nil when there are none. Read by each instrument's primary key.
    func historySpan(through end: String?) async throws -> (from: String, through: String)? {
        let rows = try await stale.query(
            """
            SELECT to_char(min(f.day), 'YYYY-MM-DD'), to_char(max(l.day), 'YYYY-MM-DD')
            FROM instruments i
            CROSS JOIN LATERAL (SELECT day FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY day LIMIT 1) f
            CROSS JOIN LATERAL (SELECT day FROM daily_bars d WHERE d.symbol = i.symbol
                                  AND (\(end)::date IS NULL OR d.day <= \(end)::date) ORDER BY day DESC LIMIT 1) l
            WHERE i.league_id IS NULL
            """
        ).decode((String?, String?).self)
        guard let (from, through) = rows.first, let from, let through else { return nil }
        return (from, through)
    }

    /// The split-adjusted close a year before the latest bar, and the split-adjusted 52-week
    /// high and low up to it (`adjusted_bars`): comparable with today's price across splits.
    func yearStatistics(_ symbol: String, through end: String?) async throws -> (yearAgoClose: Decimal?, high: Decimal?, low: Decimal?) {
        let rows = try await stale.query(
            """
            WITH latest AS (
                SELECT max(day) AS day FROM daily_bars
                WHERE symbol = \(symbol) AND (\(end)::date IS NULL OR day <= \(end)::date)
            ), year AS (
                SELECT a.* FROM latest, adjusted_bars(\(symbol), (latest.day - interval '1 year' - interval '7 days')::date,
                                                       \(end)::date, \(AdjustedHistory.split)) a
            )
            SELECT
                (SELECT close FROM year, latest WHERE year.day <= latest.day - interval '1 year' ORDER BY year.day DESC LIMIT 1),
                max(coalesce(high, close)), min(coalesce(low, close))
            FROM year, latest
            WHERE year.day > latest.day - interval '52 weeks' AND year.day <= latest.day
            """
        )
        guard let row = rows.first else { return (nil, nil, nil) }
        return try row.decode((Decimal?, Decimal?, Decimal?).self)
    }

    /// Daily bars within `days` of the latest one up to `end`, oldest first, adjusted as
    /// asked (`adjusted_bars`, for the actions up to `end`).
    func bars(_ symbol: String, days: Int, through end: String?, adjusted: AdjustedHistory) async throws -> [Chart.Point] {
        let rows = try await stale.query(
            """
            WITH latest AS (
                SELECT max(day) AS day FROM daily_bars
                WHERE symbol = \(symbol) AND (\(end)::date IS NULL OR day <= \(end)::date)
            )
            SELECT to_char(a.day, 'YYYY-MM-DD'), a.open, a.high, a.low, a.close, a.volume
            FROM latest, adjusted_bars(\(symbol), latest.day - \(days)::int + 1, \(end)::date, \(adjusted)) a
            WHERE a.day <= latest.day
            ORDER BY a.day
            """
        )
        return try rows.map { row in
            let (day, open, high, low, close, volume) = try row.decode((String, Decimal?, Decimal?, Decimal?, Decimal, Int).self)
            return Chart.Point(
                date: day, open: open?.moneyString, high: high?.moneyString, low: low?.moneyString,
                close: close.moneyString, volume: volume
            )
        }
    }

    private static func priced(_ row: PostgresRow) throws -> PricedInstrument {
        let symbol = try row.decode(String.self, column: 0)
        let name = try row.decode(String.self, column: 1)
        let price = try row.decode(Decimal.self, column: 2)
        let previous = try row.decode(Decimal?.self, column: 3)
        let asOf = try row.decode(Date.self, column: 4)
        return PricedInstrument(name: name, quote: PriceQuote(symbol: symbol, price: price, previousClose: previous, asOf: asOf))
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
