import Foundation

/// A portfolio valued now, in its own currency: the one valuation every feature that
/// shows a portfolio reads (the portfolio page, `/v2/account` and positions, the value
/// history's today, P&L, composition). Prices and values come from the SQL view
/// `holding_values`, which standings, achievements and margin checks read too, so the
/// server and the database never value a holding two ways.
struct PortfolioValuation: Sendable {
    struct Holding: Sendable {
        let symbol: String
        let name: String
        /// The instrument's id (Alpaca's `asset_id`).
        let assetID: String
        /// Negative for a short position.
        let quantity: Int
        let costBasis: Decimal
        /// What a share cost on average, to four decimals (`holding_values.average_cost`).
        let averageCost: Decimal
        /// The price now in the portfolio's currency.
        let price: Decimal
        /// The previous close in the portfolio's currency (the price when there is none);
        /// nil unless the valuation was read with the day's change.
        let previousPrice: Decimal?
        /// What the position is worth now (`holding_values.value`).
        let value: Decimal

        var unrealizedGain: Decimal { (value - costBasis).rounded(4) }
        /// What the position gained or lost since the previous close
        /// (`holding_values.day_change`); zero when read without the day's change.
        let dayChange: Decimal
    }

    /// A holding without a price is left out of a valuation, unless the portfolio's
    /// currency is not the dollar: then its rate is missing (`FxError.noRate`).
    static func requirePriced(currency: String, unpriced: Bool) throws {
        if unpriced && currency != FxCurrency.dollar { throw FxError.noRate(FxCurrency.dollar, currency) }
    }

    let id: Int
    let leagueID: Int?
    let name: String
    let kind: PortfolioKind
    let baseCurrency: String
    /// The currency of every amount here: a league's own, else USD.
    let currency: String
    let cash: Decimal
    /// Cash held back by open buy orders.
    let reserved: Decimal
    /// What new orders and trades may spend, by the SQL function `buying_power`.
    let buyingPower: Decimal
    let holdings: [Holding]
    /// What the holdings are worth now (the sum of their `holding_values`) and the
    /// portfolio's net worth (SQL `net_worth`), as the database reckons them.
    let holdingsValue: Decimal
    let netWorth: Decimal
}

extension Portfolio {
    init(_ valuation: PortfolioValuation) {
        self.init(
            id: valuation.id, leagueId: valuation.leagueID, currency: valuation.currency, cash: valuation.cash.moneyString,
            reserved: valuation.reserved.moneyString, buyingPower: valuation.buyingPower.moneyString,
            holdingsValue: valuation.holdingsValue.moneyString, netWorth: valuation.netWorth.moneyString,
            holdings: valuation.holdings.map {
                Holding(
                    symbol: Symbol.shown($0.symbol), name: $0.name, quantity: $0.quantity, price: $0.price.moneyString,
                    value: $0.value.moneyString, averageCost: $0.averageCost.moneyString,
                    unrealizedGain: $0.unrealizedGain.moneyString, dayChange: $0.dayChange.moneyString
                )
            }
        )
    }
}

extension PortfolioSummary {
    init(_ valuation: PortfolioValuation) {
        self.init(
            id: valuation.id, leagueId: valuation.leagueID, name: valuation.name, cash: valuation.cash.moneyString,
            netWorth: valuation.netWorth.moneyString, kind: valuation.kind, practice: valuation.kind == .practice,
            baseCurrency: valuation.baseCurrency, currency: valuation.currency
        )
    }
}
