import Foundation
import Hummingbird
import Postgres

/// `GET /api/portfolios/{id}/composition?date=`: what the portfolio held, by symbol and by
/// sector, now (at live prices) or at the end of a past day (at that day's closes).
/// Weights are shares of the holdings' value (a short position weighs negative).
struct Composition: ResponseEncodable, Sendable {
    struct Position: Encodable, Sendable {
        let symbol: String
        let sector: String
        let quantity: Int
        let price: String
        let value: String
        @NullEncoded var weight: String?
    }

    struct Sector: Encodable, Sendable {
        let sector: String
        let value: String
        @NullEncoded var weight: String?
    }

    /// Nil: now.
    @NullEncoded var date: String?
    let currency: String
    let cash: String
    let holdingsValue: String
    let netWorth: String
    let bySymbol: [Position]
    let bySector: [Sector]
}

struct CompositionService: Sendable {
    let reads: StaleReads
    let trading: TradingService
    let history: ValueHistoryService

    /// Instruments without a sector are grouped under this name.
    static let unclassified = "Unclassified"

    /// In another `currency` (nil: the portfolio's base currency) every amount is converted
    /// at the day's rate (today's for now); weights do not change.
    func composition(userID: Int, portfolioID: Int, date: String?, currency requested: String? = nil) async throws -> Composition {
        let live = try await trading.portfolio(userID: userID, id: portfolioID)
        let today = history.clock.today()
        let currency = try await history.currency(requested, userID: userID, portfolioID: portfolioID)
        // Amounts are in the portfolio's own currency (a past day's dollar closes at that
        // day's rate), then in the one asked for.
        let day = min(date ?? today, today)
        func exchange(from source: String, to target: String) async throws -> Decimal {
            guard source != target else { return 1 }
            guard let found = try await history.fx.rate(from: source, to: target, on: day) else { throw FxError.noRate(source, target) }
            return found.rate
        }
        let rate = try await exchange(from: live.currency, to: currency)
        func money(_ value: Decimal) -> String { (value * rate).rounded(2).moneyString }
        let held: [(symbol: String, quantity: Int, price: Decimal)]
        let cash: Decimal
        if let date, date < today {
            // Shares and cash at the day's end (`portfolio_moves`), each symbol at its last close by then.
            let rows = try await reads.query(
                """
                WITH moves AS (
                    SELECT m.symbol, m.amount, m.shares FROM portfolio_moves m
                    WHERE m.portfolio_id = \(live.id) AND m.at < market_day_start(\(date)::date + 1, \(history.clock.zone))
                ), held AS (
                    SELECT symbol, sum(shares)::int8 AS shares FROM moves WHERE symbol IS NOT NULL GROUP BY symbol HAVING sum(shares) <> 0
                )
                SELECT NULL::text, NULL::int8, coalesce((SELECT sum(amount) FROM moves), 0)
                UNION ALL
                SELECT h.symbol, h.shares,
                       coalesce((SELECT b.close FROM daily_bars b WHERE b.symbol = h.symbol AND b.day <= \(date)::date ORDER BY b.day DESC LIMIT 1), 0)
                FROM held h
                """
            ).decode((String?, Int?, Decimal).self)
            cash = rows.first { $0.0 == nil }?.2 ?? 0
            let local = try await exchange(from: ValueHistoryService.currency, to: live.currency)
            held = rows.compactMap { row in row.0.map { (symbol: $0, quantity: row.1 ?? 0, price: row.2 * local) } }
        } else {
            cash = live.cash
            held = live.holdings.map { (symbol: $0.symbol, quantity: $0.quantity, price: $0.price) }
        }
        let sectors = try await reads.query(
            "SELECT symbol, sector FROM instruments WHERE symbol = ANY(\(held.map(\.symbol))::text[])"
        ).decode((String, String).self)
        let sectorOf = Dictionary(sectors.map { ($0.0, $0.1.isEmpty ? Self.unclassified : $0.1) }) { first, _ in first }
        let total = held.reduce(Decimal(0)) { $0 + $1.price * Decimal($1.quantity) }
        func weight(_ value: Decimal) -> String? { total == 0 ? nil : (value / total).rate }
        // Largest first.
        let positions = held.map { (position: $0, value: $0.price * Decimal($0.quantity)) }
            .sorted { ($0.value, $1.position.symbol) > ($1.value, $0.position.symbol) }
            .map { position, value in
                Composition.Position(
                    symbol: position.symbol, sector: sectorOf[position.symbol] ?? Self.unclassified, quantity: position.quantity,
                    price: (position.price * rate).rounded(4).moneyString, value: money(value), weight: weight(value)
                )
            }
        var bySector: [String: Decimal] = [:]
        for position in held { bySector[sectorOf[position.symbol] ?? Self.unclassified, default: 0] += position.price * Decimal(position.quantity) }
        return Composition(
            date: date.flatMap { $0 < today ? $0 : nil }, currency: currency, cash: money(cash), holdingsValue: money(total),
            netWorth: money(cash + total),
            bySymbol: positions,
            bySector: bySector.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { .init(sector: $0.key, value: money($0.value), weight: weight($0.value)) }
        )
    }
}
