import Foundation
import Hummingbird
import Postgres

/// `GET /api/portfolios/{id}/pnl?method=`: realized and unrealized gain per holding and in
/// all, by a cost method; dividends received and fees paid.
struct ProfitAndLoss: ResponseEncodable, Sendable {
    struct Holding: Encodable, Sendable {
        let symbol: String
        /// Shares held now (negative: short).
        let quantity: Int
        let realized: String
        let unrealized: String
        /// What the shares held now cost (for a short: what its sale brought in).
        let costBasis: String
    }

    let method: CostMethod
    /// The portfolio's own currency (dollars, or a league's): the currency of its trades.
    let currency: String
    let realized: String
    let unrealized: String
    let dividends: String
    /// A league's interest earned less interest and borrow fees paid (negative: paid).
    let interest: String
    let fees: String
    let holdings: [Holding]
}

/// Which shares a sale takes, for its gain.
enum CostMethod: String, Codable, Sendable, CaseIterable {
    /// Every share of a symbol costs the same: the average of what is held.
    case average
    /// The oldest shares first.
    case fifo
    /// The newest shares first.
    case lifo
}

/// Lots derived from a portfolio's history, the one owner of realized and unrealized
/// gain. Each buy adds a lot (its cost is price × shares + fee); each sale takes shares
/// from the lots the method picks, realizing proceeds (price × shares − fee) less their
/// cost; a sale beyond the shares held opens a short lot, which later buys close. A split
/// scales every lot's shares and keeps its cost (cash in lieu of a fraction is cash, not
/// counted here). Over a position opened and closed entirely, the methods realize the
/// same total.
struct Lots {
    private struct Lot {
        /// Positive: long shares; negative: short shares.
        var shares: Int
        /// Long: what the shares cost; short: what their sale brought in.
        var amount: Decimal
    }

    let method: CostMethod
    private var lots: [String: [Lot]] = [:]
    private(set) var realized: [String: Decimal] = [:]

    init(method: CostMethod) {
        self.method = method
    }

    var symbols: [String] { Array(Set(lots.keys).union(realized.keys)).sorted() }

    func shares(_ symbol: String) -> Int { (lots[symbol] ?? []).reduce(0) { $0 + $1.shares } }
    func amount(_ symbol: String) -> Decimal { (lots[symbol] ?? []).reduce(0) { $0 + $1.amount } }

    mutating func buy(_ symbol: String, shares: Int, cost: Decimal) {
        add(symbol, shares: shares, amount: cost, closing: { $0.shares < 0 }) { taken, part, amountPart in
            // Covering a short: it gained what its sale brought in less what the cover costs.
            taken.amount - amountPart
        }
    }

    mutating func sell(_ symbol: String, shares: Int, proceeds: Decimal) {
        add(symbol, shares: -shares, amount: proceeds, closing: { $0.shares > 0 }) { taken, part, amountPart in
            amountPart - taken.amount
        }
    }

    /// A split: `after` shares where `before` were held, each lot scaled (rounded down,
    /// the last lot taking the remainder so the total is `after`).
    mutating func split(_ symbol: String, before: Int, after: Int) {
        guard var held = lots[symbol], before != 0 else { return }
        var total = 0
        for index in held.indices {
            held[index].shares = held[index].shares * after / before
            total += held[index].shares
        }
        held[held.count - 1].shares += after - total
        lots[symbol] = held.filter { $0.shares != 0 || $0.amount != 0 }
        if averaging { pool(symbol) }
    }

    private var averaging: Bool { method == .average }

    /// Takes `shares` (signed) from lots on the other side first, realizing each taken part;
    /// what is left opens a lot on this side. `amount` covers all the shares.
    private mutating func add(
        _ symbol: String, shares: Int, amount: Decimal, closing isOpposite: (Lot) -> Bool,
        gain: (_ taken: Lot, _ shares: Int, _ amount: Decimal) -> Decimal
    ) {
        var held = lots[symbol] ?? []
        var left = abs(shares)
        var amountLeft = amount
        // A part of a whole in proportion to its shares; the last part is what is left, so
        // the parts add up exactly.
        func share(of total: Decimal, _ part: Int, in whole: Int) -> Decimal {
            part == whole ? total : total * Decimal(part) / Decimal(whole)
        }
        while left > 0, let index = pick(in: held, where: isOpposite) {
            let lot = held[index]
            let take = min(left, abs(lot.shares))
            let part = Lot(shares: lot.shares.signum() * take, amount: share(of: lot.amount, take, in: abs(lot.shares)))
            let amountPart = share(of: amountLeft, take, in: left)
            realized[symbol, default: 0] += gain(part, take, amountPart)
            held[index].shares -= part.shares
            held[index].amount -= part.amount
            if held[index].shares == 0 { held.remove(at: index) }
            left -= take
            amountLeft -= amountPart
        }
        if left > 0 {
            held.append(Lot(shares: shares.signum() * left, amount: amountLeft))
        }
        lots[symbol] = held
        if averaging { pool(symbol) }
    }

    /// The lot a sale (or a cover) takes from: the oldest or the newest of the other side.
    private func pick(in held: [Lot], where isOpposite: (Lot) -> Bool) -> Int? {
        method == .lifo ? held.lastIndex(where: isOpposite) : held.firstIndex(where: isOpposite)
    }

    /// Average cost: all of a symbol's shares are one lot.
    private mutating func pool(_ symbol: String) {
        guard let held = lots[symbol], held.count > 1 else { return }
        lots[symbol] = [Lot(shares: held.reduce(0) { $0 + $1.shares }, amount: held.reduce(0) { $0 + $1.amount })]
    }
}

struct ProfitAndLossService: Sendable {
    let reads: StaleReads
    let trading: TradingService

    /// In the portfolio's own currency only (`currency` nil or that one): its gains span
    /// many days' rates, so no single rate converts them.
    func profitAndLoss(userID: Int, portfolioID: Int, method: CostMethod, currency: String? = nil) async throws -> ProfitAndLoss {
        let live = try await trading.portfolio(userID: userID, id: portfolioID)
        guard currency == nil || currency == live.currency else {
            throw InvalidInput("currency must be \(live.currency) here: P&L is counted in the portfolio's own currency (its gains span many days' rates).")
        }
        // Everything that changed the portfolio, oldest first; a split with its shares before and
        // after (summed over the position and the back-dated fills it reached).
        let rows = try await reads.query(
            """
            SELECT a.type, a.symbol, a.side, a.quantity, a.amount, a.fee, x.quantity_before, x.quantity_after
            FROM activities a
            LEFT JOIN LATERAL (SELECT sum(quantity_before)::bigint AS quantity_before, sum(quantity_after)::bigint AS quantity_after
                               FROM corporate_action_applications
                               WHERE a.type = 'split' AND portfolio_id = a.portfolio_id AND action_id = a.id) x ON true
            WHERE a.portfolio_id = \(live.id)
            ORDER BY a.at, a.source, a.id
            """
        )
        var lots = Lots(method: method)
        var dividends = Decimal(0), interest = Decimal(0), fees = Decimal(0)
        for row in rows {
            let type = try row.decode(String.self, column: "type"), symbol = try row.decode(String?.self, column: "symbol")
            let side = try row.decode(TradeSide?.self, column: "side"), quantity = try row.decode(Int?.self, column: "quantity")
            let amount = try row.decode(Decimal?.self, column: "amount"), fee = try row.decode(Decimal?.self, column: "fee")
            let before = try row.decode(Int?.self, column: "quantity_before"), after = try row.decode(Int?.self, column: "quantity_after")
            switch (type, symbol, side) {
            case ("fill", let symbol?, .buy?):
                // A buy's amount is −(cost + fee): what it paid in all.
                lots.buy(symbol, shares: quantity ?? 0, cost: -(amount ?? 0))
                fees += fee ?? 0
            case ("fill", let symbol?, .sell?):
                lots.sell(symbol, shares: quantity ?? 0, proceeds: amount ?? 0)
                fees += fee ?? 0
            case ("split", let symbol?, _):
                lots.split(symbol, before: before ?? 0, after: after ?? 0)
            case ("dividend", _, _):
                dividends += amount ?? 0
            case ("interest", _, _), ("borrow_fee", _, _):
                interest += amount ?? 0
            default:
                break
            }
        }
        let prices = Dictionary(live.holdings.map { ($0.symbol, $0.price) }) { first, _ in first }
        var realized = Decimal(0), unrealized = Decimal(0)
        let holdings = lots.symbols.map { symbol in
            let shares = lots.shares(symbol)
            let basis = lots.amount(symbol)
            let value = (prices[symbol] ?? 0) * Decimal(shares)
            // Long: value − cost; short: what the sale brought in − what covering costs now.
            let open = shares >= 0 ? value - basis : basis + value
            let gained = lots.realized[symbol] ?? 0
            realized += gained
            unrealized += open
            return ProfitAndLoss.Holding(
                symbol: Symbol.shown(symbol), quantity: shares, realized: gained.rounded(2).moneyString,
                unrealized: open.rounded(2).moneyString, costBasis: basis.rounded(2).moneyString
            )
        }
        return ProfitAndLoss(
            method: method, currency: live.currency, realized: realized.rounded(2).moneyString, unrealized: unrealized.rounded(2).moneyString,
            dividends: dividends.rounded(2).moneyString, interest: interest.moneyString, fees: fees.moneyString, holdings: holdings
        )
    }
}
