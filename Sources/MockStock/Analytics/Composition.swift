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
        let held: [(symbol: String, quantity: Int, price: Decimal, value: Decimal)]
        let cash: Decimal, holdingsValue: Decimal, netWorth: Decimal
        if let date, date < today {
            // The portfolio at the day's end (SQL `portfolio_at`, as its value history has it).
            let rows = try await reads.query(
                """
                SELECT symbol, shares::int8, price, value, max(cash) OVER (), coalesce(sum(value) OVER (), 0),
                       net_worth(max(cash) OVER (), sum(value) OVER ())
                FROM portfolio_at(\(live.id), ARRAY[\(date)::date], \(history.clock.zone))
                """
            ).decode((String?, Int?, Decimal?, Decimal?, Decimal, Decimal, Decimal).self)
            (cash, holdingsValue, netWorth) = rows.first.map { ($0.4, $0.5, $0.6) } ?? (0, 0, 0)
            held = rows.compactMap { row in
                guard let symbol = row.0, let quantity = row.1, let price = row.2, let value = row.3 else { return nil }
                return (symbol: symbol, quantity: quantity, price: price, value: value)
            }
        } else {
            (cash, holdingsValue, netWorth) = (live.cash, live.holdingsValue, live.netWorth)
            held = live.holdings.map { (symbol: $0.symbol, quantity: $0.quantity, price: $0.price, value: $0.value) }
        }
        let sectors = try await reads.query(
            "SELECT symbol, sector FROM instruments WHERE symbol = ANY(\(held.map(\.symbol))::text[])"
        ).decode((String, String).self)
        let sectorOf = Dictionary(sectors.map { ($0.0, $0.1.isEmpty ? Self.unclassified : $0.1) }) { first, _ in first }
        func weight(_ value: Decimal) -> String? { holdingsValue == 0 ? nil : (value / holdingsValue).rate }
        // Largest first.
        let positions = held.map { (position: $0, value: $0.value) }
            .sorted { ($0.value, $1.position.symbol) > ($1.value, $0.position.symbol) }
            .map { position, value in
                Composition.Position(
                    symbol: Symbol.shown(position.symbol), sector: sectorOf[position.symbol] ?? Self.unclassified, quantity: position.quantity,
                    price: (position.price * rate).rounded(4).moneyString, value: money(value), weight: weight(value)
                )
            }
        var bySector: [String: Decimal] = [:]
        for position in held { bySector[sectorOf[position.symbol] ?? Self.unclassified, default: 0] += position.value }
        return Composition(
            date: date.flatMap { $0 < today ? $0 : nil }, currency: currency, cash: money(cash), holdingsValue: money(holdingsValue),
            netWorth: money(netWorth),
            bySymbol: positions,
            bySector: bySector.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { .init(sector: $0.key, value: money($0.value), weight: weight($0.value)) }
        )
    }
}
