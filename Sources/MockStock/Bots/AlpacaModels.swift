import Foundation
import Hummingbird

/// A `/v2` answer: Alpaca's snake_case field names and RFC 3339 dates.
struct AlpacaResponse<Body: Encodable & Sendable>: ResponseGenerator {
    let body: Body
    var status: HTTPResponse.Status = .ok

    init(_ body: Body, status: HTTPResponse.Status = .ok) {
        self.body = body
        self.status = status
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(body)))
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
