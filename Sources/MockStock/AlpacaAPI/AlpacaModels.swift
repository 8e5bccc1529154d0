import Foundation
import Hummingbird

/// A `/v2` answer: Alpaca's snake_case field names and RFC 3339 dates.
struct AlpacaResponse<Body: Encodable & Sendable>: ResponseGenerator {
    let body: Body
    var status: HTTPResponse.Status = .ok
    /// Market-data snapshots keep Alpaca's camelCase keys (`latestTrade`).
    var snakeCase = true

    init(_ body: Body, status: HTTPResponse.Status = .ok, snakeCase: Bool = true) {
        self.body = body
        self.status = status
        self.snakeCase = snakeCase
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try StreamingJSONEncoder(snakeCase: snakeCase).encode(body)))
        )
    }
}

/// `GET /v2/account`: one portfolio as an Alpaca paper account. Money is in decimal strings.
struct AlpacaAccount: Encodable, Sendable {
    let id: String
    let accountNumber: String
    var status = "ACTIVE"
    var currency = "USD"
    let cash: String
    let buyingPower: String
    let regtBuyingPower: String
    let nonMarginableBuyingPower: String
    var daytradingBuyingPower = "0"
    var optionsBuyingPower = "0"
    var accruedFees = "0"
    var pendingTransferIn = "0"
    var pendingTransferOut = "0"
    let portfolioValue: String
    let equity: String
    let lastEquity: String
    let longMarketValue: String
    let shortMarketValue: String
    var initialMargin = "0"
    var maintenanceMargin = "0"
    var lastMaintenanceMargin = "0"
    var sma = "0"
    var multiplier = "1"
    var patternDayTrader = false
    let tradingBlocked: Bool
    var transfersBlocked = true
    var accountBlocked = false
    var tradeSuspendedByUser = false
    let shortingEnabled: Bool
    var daytradeCount = 0
    let createdAt: Date
}

/// `GET /v2/clock`.
struct AlpacaClock: Encodable, Sendable {
    let timestamp: Date
    let isOpen: Bool
    let nextOpen: Date
    let nextClose: Date
}

/// One day of `GET /v2/calendar`: opening and closing times (HH:MM, New York time under
/// `MARKET_HOURS=nyse`, UTC otherwise).
struct AlpacaCalendarDay: Encodable, Sendable {
    let date: String
    let open: String
    let close: String
    let sessionOpen: String
    let sessionClose: String
    let settlementDate: String
}

/// `GET /v2/assets`: an instrument. Everything trades on one exchange in the game.
struct AlpacaAsset: Encodable, Sendable {
    let id: String
    let `class` = "us_equity"
    let exchange = "NYSE"
    let symbol: String
    let name: String
    let status: String
    let tradable: Bool
    let marginable: Bool
    let shortable: Bool
    let easyToBorrow: Bool
    let fractionable = false
    let minOrderSize = "1"
    let minTradeIncrement = "1"
    let priceIncrement = "0.01"
    let attributes: [String] = []
}

/// An order in Alpaca's shape (`/v2/orders`): the same order `/api/orders` shows, named
/// by its UUID. Orders fill whole, at once: `filled_qty` is all or nothing.
struct AlpacaOrder: Encodable, Sendable {
    let id: String
    let clientOrderId: String
    let createdAt: Date
    var updatedAt: Date
    let submittedAt: Date
    @NullEncoded var filledAt: Date?
    @NullEncoded var expiredAt: Date?
    @NullEncoded var canceledAt: Date?
    @NullEncoded var failedAt: Date?
    @NullEncoded var replacedAt: Date?
    @NullEncoded var replacedBy: String?
    @NullEncoded var replaces: String?
    @NullEncoded var assetId: String?
    let symbol: String
    var assetClass = "us_equity"
    @NullEncoded var notional: String?
    let qty: String
    var filledQty: String
    @NullEncoded var filledAvgPrice: String?
    let orderClass: String
    let orderType: String
    let type: String
    let side: String
    let timeInForce: String
    @NullEncoded var limitPrice: String?
    @NullEncoded var stopPrice: String?
    var status: String
    var extendedHours = false
    /// A bracket's, OTO's or OCO's legs (null for a simple order and for a leg).
    @NullEncoded var legs: [AlpacaOrder]?
    @NullEncoded var trailPercent: String?
    @NullEncoded var trailPrice: String?
    @NullEncoded var hwm: String?

    init(_ order: Order) {
        id = order.uuid
        clientOrderId = order.clientOrderId ?? order.uuid
        createdAt = order.createdAt
        updatedAt = order.updatedAt
        submittedAt = order.createdAt
        filledAt = order.filledAt
        expiredAt = order.expiredAt
        canceledAt = order.canceledAt
        failedAt = order.status == .rejected ? order.updatedAt : nil
        replacedAt = order.replacedAt
        replacedBy = order.replacedByUUID
        replaces = order.replacesUUID
        assetId = order.assetUUID
        symbol = order.symbol
        qty = String(order.quantity)
        filledQty = String(order.filledQuantity)
        filledAvgPrice = order.filledAveragePrice
        orderType = order.type.rawValue
        type = order.type.rawValue
        side = order.side.rawValue
        timeInForce = order.timeInForce.rawValue
        limitPrice = order.limitPrice
        stopPrice = order.stopPrice
        status = order.status.rawValue
        trailPercent = order.trailPercent
        trailPrice = order.trailPrice
        hwm = order.hwm
        orderClass = order.orderClass.rawValue
        legs = order.legs.isEmpty ? nil : order.legs.map(AlpacaOrder.init)
    }

    /// The order as it was placed, before anything happened to it (its `new` event).
    static func placed(_ order: Order) -> AlpacaOrder {
        var placed = AlpacaOrder(order)
        placed.updatedAt = order.createdAt
        placed.status = OrderStatus.new.rawValue
        placed.filledQty = "0"
        placed.filledAvgPrice = nil
        placed.filledAt = nil
        placed.expiredAt = nil
        placed.canceledAt = nil
        placed.failedAt = nil
        placed.replacedAt = nil
        placed.replacedBy = nil
        return placed
    }
}

/// A message of the trade-update stream (`/stream`): `{"stream": ..., "data": ...}`.
struct AlpacaStreamMessage<Payload: Encodable & Sendable>: Encodable, Sendable {
    let stream: String
    let data: Payload

    var encoded: ByteBuffer {
        // Plain data that always encodes.
        ByteBuffer(bytes: (try? StreamingJSONEncoder(snakeCase: true).encode(self)) ?? Array("{}".utf8))
    }
}

/// The reply to `authenticate` and to `listen`.
struct AlpacaStreamStatus: Encodable, Sendable {
    var action: String?
    var status: String?
    var streams: [String]?
    var error: String?
}

/// `GET /v2/account/portfolio/history`: equity per day as JSON numbers (written exactly,
/// from decimals), with profit and loss against the first day's equity (`base_value`),
/// leaving out money paid in or taken out since; timestamps are New York midnights, as
/// Alpaca's are, whatever the server's schedule.
struct AlpacaPortfolioHistory: Encodable, Sendable {
    let timestamp: [Int]
    let equity: [Decimal]
    let profitLoss: [Decimal]
    let profitLossPct: [Decimal?]
    let baseValue: Decimal
    let baseValueAsof: String?
    var timeframe = "1D"
    var cashflow: [String: [Decimal]] = [:]

    init(_ values: [ValueHistoryService.Value]) {
        let newYork = MarketHours(schedule: .nyse)
        timestamp = values.map { Int(newYork.start(of: $0.day)?.timeIntervalSince1970 ?? 0) }
        equity = values.map(\.netWorth)
        let base = values.first?.netWorth ?? 0
        baseValue = base
        baseValueAsof = values.first?.day
        var paidIn = Decimal(0)
        var profitLoss: [Decimal] = []
        var profitLossPct: [Decimal?] = []
        for (index, value) in values.enumerated() {
            if index > 0 { paidIn += value.netInflow }
            let gain = value.netWorth - base - paidIn
            profitLoss.append(gain)
            profitLossPct.append(base + paidIn > 0 ? (gain / (base + paidIn)).rounded(6) : nil)
        }
        self.profitLoss = profitLoss
        self.profitLossPct = profitLossPct
    }
}

/// One `trade_updates` event: what happened to an order, and the order as it is now (for
/// `new`, as it was placed). A fill carries its execution (price, quantity, an id that is
/// the same on every read) and the position after it.
struct AlpacaTradeUpdate: Encodable, Sendable {
    let event: String
    let timestamp: Date
    let order: AlpacaOrder
    var executionId: String?
    var price: String?
    var qty: String?
    var positionQty: String?

    /// The events one change makes: as Alpaca documents, every order's life starts with
    /// `new` (or `rejected`), so an order written filled, canceled or expired gets its `new` first.
    /// An open order changed in place (a stop-limit triggered, a split's adjustment) is
    /// not placed again: Alpaca's stream says nothing of it.
    static func events(_ change: OrderChange) -> [AlpacaTradeUpdate] {
        switch change.announced {
        case .new:
            return change.inserted ? [AlpacaTradeUpdate(placed: change.order)] : []
        case .held:
            // A leg written to wait for its entry: its `new` comes with the entry's.
            return []
        case .rejected:
            return [AlpacaTradeUpdate(change)]
        default:
            return change.inserted ? [AlpacaTradeUpdate(placed: change.order), AlpacaTradeUpdate(change)] : [AlpacaTradeUpdate(change)]
        }
    }

    private init(placed order: Order) {
        event = "new"
        timestamp = order.createdAt
        self.order = .placed(order)
    }

    private init(_ change: OrderChange) {
        let order = change.order
        event = switch change.announced {
        case .new, .held: "new"
        case .partiallyFilled: "partial_fill"
        case .filled: "fill"
        case .canceled: "canceled"
        case .expired: "expired"
        case .rejected: "rejected"
        case .replaced: "replaced"
        }
        timestamp = order.updatedAt
        self.order = AlpacaOrder(order)
        switch change.announced {
        case .filled:
            guard let tradeID = order.tradeId else { break }
            executionId = UUID(named: "mockstock-execution-\(tradeID)").uuidString.lowercased()
            price = order.filledAveragePrice
            qty = String(change.fillQuantity ?? order.quantity)
            positionQty = change.positionQuantity.map(String.init)
        case .partiallyFilled:
            // One execution per part: named by the shares filled so far, the same on every read.
            executionId = UUID(named: "mockstock-execution-\(order.id)-\(order.filledQuantity)").uuidString.lowercased()
            price = order.filledAveragePrice
            qty = change.fillQuantity.map(String.init)
            positionQty = change.positionQuantity.map(String.init)
        default:
            break
        }
    }
}

/// One entry of `DELETE /v2/orders` (207 Multi-Status).
struct AlpacaCanceledOrder: Encodable, Sendable {
    let id: String
    let status: Int
    let body: AlpacaOrder
}

/// `POST /v2/orders` as alpaca-py sends it (numbers may come as JSON numbers or strings).
struct AlpacaOrderRequest: Decodable, Sendable {
    /// Every field the endpoint knows; any other is refused.
    static let fields: Set<String> = [
        "symbol", "qty", "notional", "side", "type", "time_in_force", "limit_price", "stop_price", "client_order_id",
        "extended_hours", "order_class", "trail_percent", "trail_price", "take_profit", "stop_loss",
    ]

    let symbol: String
    let qty: ShareQuantity?
    let notional: DecimalInput?
    let side: String
    let type: String
    let timeInForce: String
    let limitPrice: DecimalInput?
    let stopPrice: DecimalInput?
    let clientOrderId: String?
    let extendedHours: Bool?
    let orderClass: String?
    let trailPercent: DecimalInput?
    let trailPrice: DecimalInput?
    /// A bracket's, OCO's or OTO's legs: `{"limit_price"}` and `{"stop_price", "limit_price"?}`.
    let takeProfit: OrderRequest.TakeProfitInput?
    let stopLoss: OrderRequest.StopLossInput?
}

/// `PATCH /v2/orders/{id}` as alpaca-py sends it: only the fields that change.
struct AlpacaReplaceRequest: Decodable, Sendable {
    /// Every field the endpoint knows; any other is refused. `trail` is a trailing stop's
    /// new trail, in the unit it was placed with (a percentage or an amount).
    static let fields: Set<String> = ["qty", "time_in_force", "limit_price", "stop_price", "trail", "client_order_id"]

    let qty: ShareQuantity?
    let timeInForce: String?
    let limitPrice: DecimalInput?
    let stopPrice: DecimalInput?
    let trail: DecimalInput?
    let clientOrderId: String?

    /// The changes to `order`: `trail` is its trail percent or amount, whichever it was placed with.
    func changes(to order: Order) throws -> OrderChanges {
        if trail != nil && order.type != .trailingStop { throw InvalidInput("trail applies to a trailing_stop order only.") }
        let percent = order.trailPercent != nil
        return OrderChanges(quantity: qty, limitPrice: limitPrice, stopPrice: stopPrice, trailPercent: percent ? trail : nil,
                            trailPrice: percent ? nil : trail, timeInForce: timeInForce, clientOrderId: clientOrderId)
    }
}

/// `GET /v2/positions`: a holding, long or short. Ratios are decimal fractions.
struct AlpacaPosition: Encodable, SnakeCaseFields, Sendable {
    let assetId: String
    let symbol: String
    let exchange = "NYSE"
    let assetClass = "us_equity"
    let assetMarginable = false
    let avgEntryPrice: String
    let qty: String
    let side: String
    let marketValue: String
    let costBasis: String
    let unrealizedPl: String
    let unrealizedPlpc: String
    let unrealizedIntradayPl: String
    let unrealizedIntradayPlpc: String
    let currentPrice: String
    let lastdayPrice: String
    let changeToday: String

    /// Its fields as `Encodable` writes them with snake_case names (`GET /v2/positions`
    /// writes 50 at a time; `AlpacaJSONTests` holds the two to the same bytes).
    func writeFields(to fields: inout JSONFields) {
        fields.field("asset_id", assetId)
        fields.field("symbol", symbol)
        fields.field("exchange", exchange)
        fields.field("asset_class", assetClass)
        fields.field("asset_marginable", assetMarginable)
        fields.field("avg_entry_price", avgEntryPrice)
        fields.field("qty", qty)
        fields.field("side", side)
        fields.field("market_value", marketValue)
        fields.field("cost_basis", costBasis)
        fields.field("unrealized_pl", unrealizedPl)
        fields.field("unrealized_plpc", unrealizedPlpc)
        fields.field("unrealized_intraday_pl", unrealizedIntradayPl)
        fields.field("unrealized_intraday_plpc", unrealizedIntradayPlpc)
        fields.field("current_price", currentPrice)
        fields.field("lastday_price", lastdayPrice)
        fields.field("change_today", changeToday)
    }

    /// A rate — a gain over its cost, a change over the last price — to six decimals, as
    /// Alpaca writes them ("0.012346", "-0.5", "0"); "0" over nothing. Rates, not money:
    /// the quotient is taken in floating point (a Decimal division per rate was a tenth of
    /// the server's CPU answering `GET /v2/positions`); the amounts divided stay exact.
    static func rate(_ part: Decimal, over whole: Decimal) -> String {
        let quotient = NSDecimalNumber(decimal: part).doubleValue / abs(NSDecimalNumber(decimal: whole).doubleValue)
        guard quotient.isFinite, let millionths = Int64(exactly: (quotient * 1_000_000).rounded()), millionths != 0 else { return "0" }
        let magnitude = millionths.magnitude
        let whole = "\(millionths < 0 ? "-" : "")\(magnitude / 1_000_000)"
        var fraction = String(magnitude % 1_000_000)
        guard fraction != "0" else { return whole }
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        return whole + "." + fraction
    }
}

/// One entry of `DELETE /v2/positions` (207 Multi-Status).
struct AlpacaClosedPosition: Encodable, Sendable {
    let orderId: String
    let status: Int
    let symbol: String
    let body: AlpacaOrder
}

/// A bar in Alpaca's market-data shape. Prices are JSON numbers written from exact
/// decimals; trade count and VWAP are unknown here (null).
struct AlpacaBar: Encodable, Sendable {
    let t: String
    let o: Decimal
    let h: Decimal
    let l: Decimal
    let c: Decimal
    let v: Int
    @NullEncoded var n: Int?
    @NullEncoded var vw: Decimal?

    init(_ record: AlpacaStore.BarRecord) {
        t = record.timestamp
        o = record.open
        h = record.high
        l = record.low
        c = record.close
        v = record.volume
    }
}

/// `GET /v2/stocks/bars`: bars by symbol, and where the next page starts.
struct AlpacaBars: Encodable, Sendable {
    let bars: [String: [AlpacaBar]]
    @NullEncoded var nextPageToken: String?
}

/// `GET /v2/stocks/{symbol}/bars`.
struct AlpacaSymbolBars: Encodable, Sendable {
    let bars: [AlpacaBar]
    let symbol: String
    @NullEncoded var nextPageToken: String?
}

/// `GET /v2/stocks/{symbol}/bars/latest`, `…/quotes/latest` and `…/trades/latest`.
struct AlpacaSymbolLatestBar: Encodable, Sendable {
    let symbol: String
    let bar: AlpacaBar
}

struct AlpacaSymbolLatestQuote: Encodable, Sendable {
    let symbol: String
    let quote: AlpacaQuote
}

struct AlpacaSymbolLatestTrade: Encodable, Sendable {
    let symbol: String
    let trade: AlpacaTrade
}

/// `GET /v2/stocks/bars/latest`.
struct AlpacaLatestBars: Encodable, Sendable {
    let bars: [String: AlpacaBar]
}

/// The current price as a quote: bid and ask both at the price (the game has no spread).
struct AlpacaQuote: Encodable, Sendable {
    let t: Date
    let ap: Decimal
    let `as`: Int
    let bp: Decimal
    let bs: Int
    let ax = "N"
    let bx = "N"
    let c: [String] = ["R"]
    let z = "A"

    init(_ price: PriceQuote) {
        t = price.asOf
        ap = price.price
        self.as = 1
        bp = price.price
        bs = 1
    }
}

/// The current price as the last trade.
struct AlpacaTrade: Encodable, Sendable {
    let t: Date
    let p: Decimal
    let s: Int
    let x = "N"
    let i: Int
    let c: [String] = ["@"]
    let z = "A"

    init(_ price: PriceQuote) {
        t = price.asOf
        p = price.price
        s = 1
        i = Int(price.asOf.timeIntervalSince1970 * 1000)
    }
}

struct AlpacaLatestQuotes: Encodable, Sendable {
    let quotes: [String: AlpacaQuote]
}

struct AlpacaLatestTrades: Encodable, Sendable {
    let trades: [String: AlpacaTrade]
}

/// `GET /v2/account/activities`: a fill (`FILL`, a trade activity) or a cash or share
/// movement (a non-trade activity). Amounts are JSON numbers written from exact decimals.
struct AlpacaActivity: Encodable, Sendable {
    /// Our activity kinds by Alpaca's activity type.
    static let types: [String: [String]] = [
        "FILL": ["fill"], "DIV": ["dividend"], "CIL": ["cash_in_lieu"], "CSD": ["deposit", "starting_cash"],
        "CSW": ["withdrawal"], "JNLC": ["reward", "adjustment"], "SPLIT": ["split"], "INT": ["interest"], "FEE": ["borrow_fee"],
    ]

    let id: String
    let accountId: String
    let activityType: String
    // A fill.
    var transactionTime: Date?
    var type: String?
    var price: Decimal?
    var qty: Int?
    var side: String?
    var symbol: String?
    var leavesQty: Int?
    var orderId: String?
    var cumQty: Int?
    var orderStatus: String?
    /// MockStock's own, on a fill: what made it and where its price came from (as `Trade`'s).
    var source: TradeSource?
    var pricing: Trade.Pricing?
    // Any other.
    var date: String?
    var netAmount: Decimal?
    var description: String?
    var status: String?

    init(_ record: AlpacaStore.ActivityRecord, accountID: String) {
        id = record.cursor
        accountId = accountID
        activityType = Self.types.first { $0.value.contains(record.type) }?.key ?? "MA"
        symbol = record.symbol.map(Symbol.shown)
        if record.type == "fill" {
            transactionTime = record.at
            type = "fill"
            price = record.price
            qty = record.quantity
            side = record.side?.rawValue
            leavesQty = 0
            orderId = record.orderUUID
            cumQty = record.quantity
            orderStatus = "filled"
            source = record.madeBy
            pricing = record.pricing.map(Trade.Pricing.init)
        } else {
            date = record.day
            netAmount = record.amount ?? 0
            description = record.note ?? record.type.replacingOccurrences(of: "_", with: " ")
            qty = record.quantity
            status = "executed"
        }
    }
}

/// `GET /v2/stocks/snapshots`: per symbol, the current price as last trade and quote, and
/// the last two stored days and the last minute bar.
struct AlpacaSnapshot: Encodable, Sendable {
    /// Set on the single-symbol route only (`GET /v2/stocks/{symbol}/snapshot`).
    var symbol: String?
    @NullEncoded var latestTrade: AlpacaTrade?
    @NullEncoded var latestQuote: AlpacaQuote?
    @NullEncoded var minuteBar: AlpacaBar?
    @NullEncoded var dailyBar: AlpacaBar?
    @NullEncoded var prevDailyBar: AlpacaBar?
}
