import Foundation
import Hummingbird
import Postgres

/// How an order prices its fill.
public enum OrderType: String, Codable, Sendable, PostgresCodable, CaseIterable {
    /// At the current price.
    case market
    /// At the limit price or better.
    case limit
    /// A market order once the price crosses the stop price.
    case stop
    /// A limit order once the price crosses the stop price.
    case stopLimit = "stop_limit"
    /// A stop that follows the best price since placing by a percentage or an amount
    /// (SQL `trailing_stop`); a market order once the price crosses it.
    case trailingStop = "trailing_stop"

    var needsLimitPrice: Bool { self == .limit || self == .stopLimit }
    /// Whether the order is sent with a stop price (a trailing stop makes its own).
    var needsStopPrice: Bool { self == .stop || self == .stopLimit }
}

/// An order of several parts, as Alpaca names them (docs/trading.md, "Brackets, OCO and
/// OTO"): its legs wait for their entry and cancel each other.
public enum OrderClass: String, Codable, Sendable, PostgresCodable, CaseIterable {
    case simple
    /// A buy with a take-profit and a stop-loss sale, which wait until it fills; the first
    /// of them to fill cancels the other.
    case bracket
    /// A take-profit and a stop-loss sale of shares held: the first to fill cancels the other.
    case oco
    /// A buy with one take-profit or stop-loss sale, which waits until it fills.
    case oto
}

/// How long an order stays open.
public enum TimeInForce: String, Codable, Sendable, PostgresCodable, CaseIterable {
    /// Until the session's close.
    case day
    /// Until cancelled.
    case gtc
    /// Immediate or cancel: fills at once, what it can, and the rest is cancelled (orders
    /// fill whole, but for a league's volume cap, so this is mostly the same as `fok`).
    case ioc
    /// Fill or kill: fills at once, whole, or is cancelled.
    case fok

    var fillsAtOnceOrNever: Bool { self == .ioc || self == .fok }
}

public enum OrderStatus: String, Codable, Sendable, PostgresCodable {
    /// Open: resting until it fills, is cancelled or expires.
    case new
    /// A leg waiting for its entry to fill (`OrderClass`): it holds nothing and fills nothing.
    case held
    /// Shown, never stored: an open order (`new`) that has filled in part (a league's
    /// `volumeCapPercent`), the rest waiting for later market days.
    case partiallyFilled = "partially_filled"
    case filled
    case canceled
    case expired
    /// Accepted, but its fill was refused when the price came (no buying power left).
    case rejected
    /// Closed by a replacement, which names it (`replacesOrderId`).
    case replaced
}

/// An order as clients see it.
struct Order: ResponseEncodable, Sendable {
    let id: Int
    /// How the Alpaca-compatible API (`/v2`) names the order.
    let uuid: String
    @NullEncoded var clientOrderId: String?
    let portfolioId: Int
    let symbol: String
    let side: TradeSide
    let type: OrderType
    let quantity: Int
    @NullEncoded var limitPrice: String?
    @NullEncoded var stopPrice: String?
    let timeInForce: TimeInForce
    let status: OrderStatus
    let filledQuantity: Int
    @NullEncoded var filledAveragePrice: String?
    @NullEncoded var tradeId: Int?
    let createdAt: Date
    let updatedAt: Date
    @NullEncoded var filledAt: Date?
    @NullEncoded var canceledAt: Date?
    @NullEncoded var expiredAt: Date?
    @NullEncoded var rejectReason: String?
    /// The order this one replaced, and the one that replaced it (status `replaced`).
    @NullEncoded var replacesOrderId: Int?
    @NullEncoded var replacedByOrderId: Int?
    @NullEncoded var replacedAt: Date?
    /// The trader's journal note.
    @NullEncoded var note: String?
    /// Who placed it: the player (or bot) whose request it was.
    @NullEncoded var placedBy: Int?
    /// A trailing stop's trail and the best price since it was placed (`stopPrice` is the stop now).
    @NullEncoded var trailPercent: String?
    @NullEncoded var trailPrice: String?
    @NullEncoded var hwm: String?
    /// Its class; a leg's parent (its entry, or an OCO's take-profit); a parent's legs.
    let orderClass: OrderClass
    @NullEncoded var parentId: Int?
    let legs: [Order]
    /// The same two orders' UUIDs, and the instrument's, as `/v2` names them.
    let replacesUUID: String?
    let replacedByUUID: String?
    let assetUUID: String?

    init(_ record: OrderStore.OrderRecord) {
        id = record.id
        uuid = record.uuid
        clientOrderId = record.clientOrderID
        portfolioId = record.portfolioID
        symbol = Symbol.shown(record.symbol)
        side = record.side
        type = record.type
        quantity = record.quantity
        limitPrice = record.limitPrice?.moneyString
        stopPrice = record.stopPrice?.moneyString
        timeInForce = record.timeInForce
        status = record.status == .new && record.filledQuantity > 0 ? .partiallyFilled : record.status
        filledQuantity = record.filledQuantity
        filledAveragePrice = record.fillPrice?.moneyString
        tradeId = record.tradeID
        createdAt = record.createdAt
        updatedAt = record.updatedAt
        filledAt = record.filledAt
        canceledAt = record.canceledAt
        expiredAt = record.expiredAt
        rejectReason = record.rejectReason
        replacesOrderId = record.replaces
        replacedByOrderId = record.replacedBy
        replacedAt = record.replacedAt
        replacesUUID = record.replacesUUID
        replacedByUUID = record.replacedByUUID
        assetUUID = record.assetUUID
        note = record.note
        placedBy = record.placedBy
        trailPercent = record.trailPercent.map { "\($0)" }
        trailPrice = record.trailPrice?.moneyString
        hwm = record.hwm?.moneyString
        orderClass = record.orderClass
        parentId = record.parentID
        legs = record.legs.map(Order.init)
    }

    private enum CodingKeys: String, CodingKey {
        case id, uuid, clientOrderId, portfolioId, symbol, side, type, quantity, limitPrice, stopPrice, trailPercent, trailPrice, hwm,
             timeInForce, status, filledQuantity, filledAveragePrice, tradeId, createdAt, updatedAt, filledAt, canceledAt, expiredAt,
             rejectReason, replacesOrderId, replacedByOrderId, replacedAt, note, placedBy, orderClass, parentId, legs
    }
}

/// `PATCH /api/orders/{id}` as sent: what changes when an open order is replaced. What is
/// not sent is kept; symbol, side and type never change.
struct OrderChanges: Decodable, Sendable {
    var quantity: ShareQuantity?
    var limitPrice: DecimalInput?
    var stopPrice: DecimalInput?
    /// A trailing stop's new trail (either).
    var trailPercent: DecimalInput?
    var trailPrice: DecimalInput?
    var timeInForce: String?
    var clientOrderId: String?
}

struct CanceledOrders: ResponseEncodable {
    let canceled: [Order]
}

/// `POST /api/orders` as sent; `OrderTicket` is the checked form.
struct OrderRequest: Decodable, Sendable {
    let symbol: String
    let side: String
    let quantity: ShareQuantity
    let type: String?
    let limitPrice: DecimalInput?
    let stopPrice: DecimalInput?
    /// A trailing stop's trail: a percentage of the best price, or an amount (one of them).
    var trailPercent: DecimalInput? = nil
    var trailPrice: DecimalInput? = nil
    let timeInForce: String?
    let clientOrderId: String?
    let portfolioId: Int?
    /// A past day (`YYYY-MM-DD`): a back-dated market order in a practice portfolio.
    var at: String? = nil
    /// The trader's journal note.
    var note: String? = nil
    /// `simple` (the default), `bracket`, `oco` or `oto`, with the legs' prices.
    var orderClass: String? = nil
    var takeProfit: TakeProfitInput? = nil
    var stopLoss: StopLossInput? = nil

    struct TakeProfitInput: Decodable, Sendable {
        let limitPrice: DecimalInput
    }

    struct StopLossInput: Decodable, Sendable {
        let stopPrice: DecimalInput
        var limitPrice: DecimalInput? = nil
    }
}

/// An order that passed every check that needs no database.
/// What an order would hold back while it rests (`POST /api/orders/preview`): the cash
/// of a buy (its reservation price × quantity plus the commission, in the portfolio's
/// currency) or the shares of a sale. The web client shows it rather than computing it.
struct OrderPreview: ResponseEncodable {
    let reservedCash: String
    let reservedShares: Int
    let currency: String
}

struct OrderTicket: Sendable {
    /// Prices are positive, below a billion, with at most 4 fraction digits (the precision
    /// of quotes).
    static let maximumPrice = Decimal(1_000_000_000)
    static let priceScale = 4

    /// As sent; once the portfolio's rules are read, the instrument it names there
    /// (`TradingRules.instrument`: a scenario league's own).
    var symbol: String
    let side: TradeSide
    let quantity: Int
    let type: OrderType
    let limitPrice: Decimal?
    let stopPrice: Decimal?
    /// A trailing stop's trail: exactly one of them.
    let trailPercent: Decimal?
    let trailPrice: Decimal?
    let timeInForce: TimeInForce
    var clientOrderID: String?
    let portfolioID: Int?
    /// The day of a back-dated market order.
    let at: String?
    /// The journal note (at most 500 characters, trimmed; nil when blank).
    let note: String?
    /// Set for orders no league's journal rule applies to: sent through `/v2`, or a
    /// replacement (its note was asked for when the order it replaces was placed).
    var journalExempt = false
    /// Set for orders an API key places (`/v2`): a league forbidding bots stops them.
    var byKey = false
    /// Its class; `legs` are the sales it places with it (none for a simple order).
    var orderClass = OrderClass.simple
    var legs: [Leg] = []

    /// A take-profit (a limit sale) or a stop-loss (a stop or stop-limit sale) of the
    /// entry's quantity.
    struct Leg: Sendable, Equatable {
        let type: OrderType
        let limitPrice: Decimal?
        let stopPrice: Decimal?

        static func takeProfit(_ limit: Decimal) -> Leg { Leg(type: .limit, limitPrice: limit, stopPrice: nil) }
        static func stopLoss(_ stop: Decimal, limit: Decimal?) -> Leg {
            Leg(type: limit == nil ? .stop : .stopLimit, limitPrice: limit, stopPrice: stop)
        }
    }

    init(_ request: OrderRequest) throws {
        symbol = Symbol.normalize(request.symbol)
        guard let side = TradeSide(rawValue: request.side) else { throw InvalidInput("side must be buy or sell.") }
        self.side = side
        quantity = request.quantity.value
        guard let type = OrderType(rawValue: request.type ?? "market") else {
            throw InvalidInput("type must be one of \(OrderType.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        self.type = type
        guard let timeInForce = TimeInForce(rawValue: request.timeInForce ?? "day") else {
            throw InvalidInput("timeInForce must be one of \(TimeInForce.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        self.timeInForce = timeInForce
        guard let orderClass = OrderClass(rawValue: request.orderClass ?? "simple") else {
            throw InvalidInput("orderClass must be one of \(OrderClass.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        self.orderClass = orderClass
        let takeProfit = try request.takeProfit.map { try Self.price($0.limitPrice.value, field: "takeProfit.limitPrice", needed: true, type: .limit)! }
        let stopLoss = try request.stopLoss.map { loss in
            (stop: try Self.price(loss.stopPrice.value, field: "stopLoss.stopPrice", needed: true, type: .stop)!,
             limit: try loss.limitPrice.map { try Self.price($0.value, field: "stopLoss.limitPrice", needed: true, type: .stopLimit)! })
        }
        // An OCO is its take-profit: a limit sale at takeProfit.limitPrice (limitPrice, if sent, the same).
        var limitInput = request.limitPrice?.value
        if orderClass == .oco, let takeProfit {
            if let limitInput, limitInput != takeProfit { throw InvalidInput("An oco order's limitPrice is its takeProfit.limitPrice.") }
            limitInput = takeProfit
        }
        limitPrice = try Self.price(limitInput, field: "limitPrice", needed: type.needsLimitPrice, type: type)
        stopPrice = try Self.price(request.stopPrice?.value, field: "stopPrice", needed: type.needsStopPrice, type: type)
        (trailPercent, trailPrice) = try Self.trail(percent: request.trailPercent?.value, price: request.trailPrice?.value, type: type)
        if let id = request.clientOrderId {
            try TextInput.check(id, field: "clientOrderId", length: 1...128, use: .privateToSender)
        }
        clientOrderID = request.clientOrderId
        if let id = request.portfolioId, id <= 0 { throw InvalidInput("portfolioId must be a positive whole number.") }
        portfolioID = request.portfolioId
        try BackdatedTrades.check(request.at)
        if request.at != nil && type != .market { throw InvalidInput("at back-dates market orders only: they fill at that day's close.") }
        at = request.at
        note = try JournalNote.parse(request.note)
        legs = try Self.legs(orderClass, side: side, type: type, timeInForce: timeInForce, limitPrice: limitPrice,
                             takeProfit: takeProfit, stopLoss: stopLoss)
        if orderClass != .simple && at != nil { throw InvalidInput("at back-dates simple market orders only.") }
    }

    /// The legs an order of `orderClass` places, checked as Alpaca checks them: a bracket's
    /// entry is a market or limit buy lasting a day or until cancelled, with a take-profit
    /// above its stop-loss (and a limit entry between them); an OTO's has one of them; an
    /// OCO is a limit sale (the take-profit) with a stop-loss below it.
    private static func legs(
        _ orderClass: OrderClass, side: TradeSide, type: OrderType, timeInForce: TimeInForce, limitPrice: Decimal?,
        takeProfit: Decimal?, stopLoss: (stop: Decimal, limit: Decimal?)?
    ) throws -> [Leg] {
        if orderClass == .simple {
            if takeProfit != nil || stopLoss != nil { throw InvalidInput("takeProfit and stopLoss go with orderClass bracket, oco or oto.") }
            return []
        }
        guard timeInForce == .day || timeInForce == .gtc else {
            throw InvalidInput("An order with legs lasts a day or until cancelled: timeInForce must be day or gtc.")
        }
        if let takeProfit, let stopLoss, stopLoss.stop >= takeProfit {
            throw InvalidInput("takeProfit.limitPrice must be above stopLoss.stopPrice.")
        }
        let loss = stopLoss.map { Leg.stopLoss($0.stop, limit: $0.limit) }
        switch orderClass {
        case .simple:
            return []
        case .bracket, .oto:
            guard side == .buy else { throw InvalidInput("A \(orderClass.rawValue) order's entry is a buy; its legs sell what it bought.") }
            guard type == .market || type == .limit else {
                throw InvalidInput("A \(orderClass.rawValue) order's entry is a market or limit order.")
            }
            if let limitPrice {
                if let takeProfit, takeProfit <= limitPrice { throw InvalidInput("takeProfit.limitPrice must be above the entry's limitPrice.") }
                if let stopLoss, stopLoss.stop >= limitPrice { throw InvalidInput("stopLoss.stopPrice must be below the entry's limitPrice.") }
            }
            if orderClass == .bracket {
                guard let takeProfit, let loss else { throw InvalidInput("A bracket order needs both takeProfit and stopLoss.") }
                return [.takeProfit(takeProfit), loss]
            }
            switch (takeProfit, loss) {
            case (let takeProfit?, nil): return [.takeProfit(takeProfit)]
            case (nil, let loss?): return [loss]
            default: throw InvalidInput("An oto order needs either takeProfit or stopLoss.")
            }
        case .oco:
            guard side == .sell, type == .limit else { throw InvalidInput("An oco order is a limit sale (its take-profit) of shares held.") }
            guard takeProfit != nil, let loss else { throw InvalidInput("An oco order needs both takeProfit and stopLoss.") }
            return [loss]
        }
    }

    /// The order that replaces `old` with `changes` applied, checked like a new order. It
    /// rests like `old` did, so it cannot be one that fills at once or never.
    init(replacing old: OrderStore.OrderRecord, with changes: OrderChanges) throws {
        // A trailing stop keeps its trail unless another is sent; its stop is its own, never sent.
        let trailing = old.type == .trailingStop
        let newTrail = changes.trailPercent != nil || changes.trailPrice != nil
        try self.init(OrderRequest(
            symbol: Symbol.shown(old.symbol), side: old.side.rawValue, quantity: try changes.quantity ?? ShareQuantity(old.quantity),
            type: old.type.rawValue, limitPrice: changes.limitPrice ?? old.limitPrice.map(DecimalInput.init),
            stopPrice: changes.stopPrice ?? (trailing ? nil : old.stopPrice.map(DecimalInput.init)),
            trailPercent: newTrail ? changes.trailPercent : old.trailPercent.map(DecimalInput.init),
            trailPrice: newTrail ? changes.trailPrice : old.trailPrice.map(DecimalInput.init),
            timeInForce: changes.timeInForce ?? old.timeInForce.rawValue, clientOrderId: changes.clientOrderId,
            portfolioId: old.portfolioID, note: old.note
        ))
        journalExempt = true
        if timeInForce.fillsAtOnceOrNever {
            throw InvalidInput("A replacement rests like the order it replaces: timeInForce must be day or gtc.")
        }
    }

    /// A trailing stop's trail: a percentage above 0 and below 100, or an amount, never both;
    /// other types take neither.
    private static func trail(percent: Decimal?, price: Decimal?, type: OrderType) throws -> (Decimal?, Decimal?) {
        guard type == .trailingStop else {
            if percent != nil || price != nil { throw InvalidInput("trailPercent and trailPrice apply to a trailing_stop order only.") }
            return (nil, nil)
        }
        switch (percent, price) {
        case (nil, nil), (.some, .some): throw InvalidInput("A trailing_stop order needs either trailPercent or trailPrice.")
        case (let percent?, nil):
            guard percent > 0, percent < 100, percent.rounded(priceScale) == percent else {
                throw InvalidInput("trailPercent must be above 0 and below 100, with at most \(priceScale) decimals.")
            }
            return (percent, nil)
        case (nil, let price?):
            return (nil, try Self.price(price, field: "trailPrice", needed: true, type: type))
        }
    }

    private static func price(_ value: Decimal?, field: String, needed: Bool, type: OrderType) throws -> Decimal? {
        guard needed else {
            if value != nil { throw InvalidInput("\(field) does not apply to a \(type.rawValue) order.") }
            return nil
        }
        guard let value else { throw InvalidInput("A \(type.rawValue) order needs a \(field).") }
        guard value > 0, value < maximumPrice else { throw InvalidInput("\(field) must be above 0 and below 1000000000.") }
        guard value.rounded(priceScale) == value else {
            throw InvalidInput("\(field) may have at most \(priceScale) digits after the decimal point.")
        }
        return value
    }

    /// The same order sent twice has the same hash; a `clientOrderId` reused for another
    /// order is refused by comparing them.
    var requestHash: String {
        var parts: [String] = [symbol, side.rawValue, String(quantity), type.rawValue, limitPrice.map { "\($0)" } ?? "-",
                               stopPrice.map { "\($0)" } ?? "-", timeInForce.rawValue, portfolioID.map(String.init) ?? "personal"]
        if type == .trailingStop {
            let percent: String = trailPercent.map { "\($0)%" } ?? "-"
            let amount: String = trailPrice.map { "\($0)" } ?? "-"
            parts.append("trail \(percent) \(amount)")
        }
        if orderClass != .simple {
            parts.append(([orderClass.rawValue] + legs.map { "\($0.type.rawValue) \($0.limitPrice.map { "\($0)" } ?? "-") \($0.stopPrice.map { "\($0)" } ?? "-")" })
                .joined(separator: " "))
        }
        return parts
            .joined(separator: "\n").appending(at.map { "\n\($0)" } ?? "").appending(note.map { "\nnote \($0)" } ?? "").sha256Hex
    }

    /// The price a buy reserves cash at: the most it may pay (limit), the price that sets
    /// it off (stop), or the last price for a market order waiting for the open.
    func reservationPrice(lastPrice: Decimal) -> Decimal {
        limitPrice ?? stopPrice ?? lastPrice
    }
}

/// The commission a fill pays: flat plus a percentage of the amount, rounded to the cent.
struct Commission: Sendable, Equatable {
    var flat: Decimal = 0
    var percent: Decimal = 0

    func fee(for amount: Decimal) -> Decimal {
        (flat + amount * percent / 100).rounded(2)
    }
}
