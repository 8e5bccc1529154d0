import Foundation
import Hummingbird
import Postgres

/// A trade as clients see it (openapi.yaml `Trade`).
struct Trade: Codable, Sendable, Equatable {
    let id: Int
    let portfolioId: Int
    let symbol: String
    let side: TradeSide
    let quantity: Int
    let price: String
    let amount: String
    let fee: String
    let createdAt: Date
    /// Only on a fill in another currency than dollars (a league's): units of it per
    /// dollar, spread included; `price` is the dollar price times it.
    let fxRate: String?
    /// The trader's journal note, if any.
    var note: String?
    /// Who placed it: the player (or bot) whose request or order it was.
    var placedBy: Int?
    /// What made it: a trade, an order, or a forced sale (liquidation).
    var source: TradeSource
    /// Where its price came from, per share.
    var pricing: Pricing

    /// A fill's price per share as quote + spread + impact (a buy) or quote − spread −
    /// impact (a sale), decimal strings ≥ 0 (`FillPricing`).
    struct Pricing: Codable, Sendable, Equatable {
        let quote: String
        let spread: String
        let impact: String

        init(_ pricing: FillPricing) {
            quote = pricing.quote.moneyString
            spread = pricing.spread.moneyString
            impact = pricing.impact.moneyString
        }
    }

    init(_ record: TradingStore.TradeRecord) {
        id = record.id
        portfolioId = record.portfolioID
        symbol = Symbol.shown(record.symbol)
        side = record.side
        quantity = record.quantity
        price = record.price.moneyString
        amount = record.amount.moneyString
        fee = record.fee.moneyString
        createdAt = record.createdAt
        fxRate = record.fxRate?.rate
        note = record.note
        placedBy = record.placedBy
        source = record.source
        pricing = Pricing(record.pricing)
    }
}

/// The answer to a buy or sell (openapi.yaml `TradeResult`).
struct TradeResult: ResponseEncodable, Equatable {
    struct Position: Codable, Equatable {
        let symbol: String
        let quantity: Int
    }

    let trade: Trade
    let cash: String
    let position: Position
}

/// Which portfolio is which (`portfolios.kind`): each user's one personal portfolio, a
/// member's portfolio in an isolated league, or a practice portfolio of the user's own.
/// The SQL function `portfolio_named` picks "the portfolio a request names, else the
/// personal one".
enum PortfolioKind: String, PostgresCodable, Codable, Sendable {
    case personal, league, practice
}

struct PortfolioSummary: ResponseEncodable {
    let id: Int
    @NullEncoded var leagueId: Int?
    let name: String
    let cash: String
    let netWorth: String
    /// Which portfolio it is: `personal`, `league` or `practice`.
    let kind: PortfolioKind
    /// A practice portfolio: the user's own, never ranked.
    let practice: Bool
    /// The currency its figures are shown in by default.
    let baseCurrency: String
    /// The currency its cash and values are in: a league's own, else USD.
    let currency: String
}

/// A portfolio valued at current prices (openapi.yaml `Portfolio`).
struct Portfolio: ResponseEncodable {
    struct Holding: Encodable {
        let symbol: String
        let name: String
        let quantity: Int
        let price: String
        let value: String
        let averageCost: String
        let unrealizedGain: String
        let dayChange: String
    }

    let id: Int
    @NullEncoded var leagueId: Int?
    /// The currency of every amount here: a league's own, else USD (holdings' dollar
    /// prices converted at the rate now).
    let currency: String
    let cash: String
    /// Cash held back by open buy orders.
    let reserved: String
    /// Cash free for new orders: cash − reserved.
    let buyingPower: String
    let holdingsValue: String
    let netWorth: String
    let holdings: [Holding]
}

struct CashMovement: Encodable, Sendable {
    let id: Int
    let portfolioId: Int
    let kind: CashMovementKind
    let amount: String
    let note: String
    let createdAt: Date
}

/// A number of shares from JSON: a whole number 1...1,000,000,000 (a JSON number or a
/// string of digits); anything else is 422.
struct ShareQuantity: Decodable, Sendable {
    static let maximum = 1_000_000_000
    let value: Int

    /// A quantity computed by the server (closing a position), checked like a sent one.
    init(_ whole: Int) throws {
        guard (1...Self.maximum).contains(whole) else { throw InvalidInput("qty must be a whole number of shares from 1 to 1000000000.") }
        value = whole
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let whole = try? container.decode(Int.self), (1...Self.maximum).contains(whole) {
            value = whole
            return
        }
        let number: Decimal?
        if let text = try? container.decode(String.self) {
            number = text.allSatisfy({ $0.isASCII && $0.isNumber }) ? Decimal(exactly: text) : nil
        } else {
            number = try? container.decode(Decimal.self)
        }
        guard let number, number >= 1, number <= Decimal(Self.maximum), number == number.rounded(0) else {
            throw InvalidInput("amount must be a whole number of shares from 1 to 1000000000.")
        }
        value = NSDecimalNumber(decimal: number).intValue
    }
}

/// Which way a trade goes.
public enum TradeSide: String, Codable, Sendable, PostgresCodable {
    case buy, sell
}

/// Why cash moved into or out of a portfolio (besides trades).
enum CashMovementKind: String, Codable, Sendable, PostgresCodable {
    case startingCash = "starting_cash"
    case adjustment
    case reward
    /// A dividend received (or, for a short position, paid).
    case dividend
    /// Cash for the fraction of a share a split left.
    case cashInLieu = "cash_in_lieu"
    case deposit
    case withdrawal
    /// Interest a league charges on borrowed cash (negative) or pays on cash held.
    case interest
    /// What a league charges a short position for its borrowed shares.
    case borrowFee = "borrow_fee"
}

/// What trading refuses.
enum TradingError: Error, Equatable {
    /// Someone else's portfolio looks the same as one that does not exist.
    case noSuchPortfolio
    /// A team's portfolio, which the caller only views.
    case notATrader
    case insufficientFunds
    /// A sale whose proceeds would not pay its fee.
    case proceedsBelowFee
    case insufficientShares
    /// A short sale the portfolio's equity would not cover.
    case insufficientMargin
    /// A league portfolio trades only while its league runs.
    case leagueNotRunning
    /// The league's host froze trading: no trade, no new order (cancelling still works).
    case tradingFrozen
    /// The league asks for a journal note on every order and trade of its portfolios.
    case noteRequired
    /// A withdrawal of more than the cash free now.
    case insufficientCashToWithdraw
    /// A user has at most this many practice portfolios.
    case tooManyPortfolios(Int)
    /// A back-dated trade anywhere but in a practice portfolio.
    case backdatingNotAllowed
    /// An entry dated before the portfolio's latest one: history is written in date order.
    case outOfOrder
    /// A back-dated trade on a day the symbol has no close.
    case noClose(symbol: String, day: String)
    /// The Idempotency-Key was first used for a different request.
    case idempotencyKeyReused
    /// The Idempotency-Key's first request is still being answered.
    case idempotencyKeyInFlight
    /// A trade statement reported success without its rows.
    case incompleteRecord
    /// Someone else's order looks the same as one that does not exist.
    case noSuchOrder
    /// The order filled, expired or was cancelled already.
    case orderNotOpen
    /// An order that must fill at once (`ioc`, `fok`) while the market is closed.
    case marketClosed
    /// The portfolio's league does not allow this type of order.
    case orderTypeNotAllowed(OrderType)
    /// The portfolio's league does not allow trading this symbol.
    case symbolNotAllowed(String)
    /// The buy would make one symbol more than this percentage of the portfolio's net worth.
    case positionLimit(Decimal)
    /// Buying (or with `shorting`, selling short) a stock priced below the league's minimum.
    case priceTooLow(shorting: Bool)
    /// Beyond the league's volume cap for the portfolio in the symbol today (`volumeCapPercent`):
    /// `available` shares could still fill.
    case volumeCap(available: Int)
}

/// One thing that changed a portfolio: a fill, a cash movement (dividend, cash in lieu,
/// reward, ...) or a split.
struct Activity: Encodable, Sendable {
    let id: String
    let type: String
    @NullEncoded var symbol: String?
    @NullEncoded var side: TradeSide?
    @NullEncoded var quantity: Int?
    @NullEncoded var price: String?
    @NullEncoded var amount: String?
    @NullEncoded var fee: String?
    @NullEncoded var note: String?
    let at: Date
    /// A fill's: what made it and where its price came from (as on `Trade`); null otherwise.
    @NullEncoded var source: TradeSource?
    @NullEncoded var pricing: Trade.Pricing?

    init(_ record: TradingStore.ActivityRecord) {
        id = record.id
        type = record.type
        symbol = record.symbol.map(Symbol.shown)
        side = record.side
        quantity = record.quantity
        price = record.price?.moneyString
        amount = record.amount?.moneyString
        fee = record.fee?.moneyString
        note = record.note
        at = record.at
        source = record.madeBy
        pricing = record.pricing.map(Trade.Pricing.init)
    }
}

/// A page of activities; `nextBefore` is an opaque cursor for the next page (null on the last).
struct ActivityPage: ResponseEncodable {
    let items: [Activity]
    @NullEncoded var nextBefore: String?
}
