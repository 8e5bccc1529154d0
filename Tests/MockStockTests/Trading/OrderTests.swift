import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Synchronization
import Testing
import TestSupport

struct OrderBody: Decodable, Equatable {
    let id: Int
    let clientOrderId: String?
    let portfolioId: Int
    let symbol: String
    let side: String
    let type: String
    let quantity: Int
    let limitPrice: String?
    let stopPrice: String?
    let timeInForce: String
    let status: String
    let filledQuantity: Int
    let filledAveragePrice: String?
    let tradeId: Int?
    let createdAt: String
    let updatedAt: String
    let filledAt: String?
    let canceledAt: String?
    let expiredAt: String?
    let rejectReason: String?
    var replacesOrderId: Int?
    var replacedByOrderId: Int?
    var replacedAt: String?
    var note: String?
}

struct OrderPageBody: Decodable {
    let items: [OrderBody]
    let nextBefore: Int?
}

struct ReservedPortfolioBody: Decodable {
    let cash: String
    let reserved: String
    let buyingPower: String
}

extension TestClientProtocol {
    func placeOrder(_ body: String, token: String) async throws -> TestResponse {
        try await send(.post, "/api/orders", body: body, token: token)
    }

    /// Places an order that must be accepted (201) and returns it.
    func placeOrderOK(_ body: String, token: String) async throws -> OrderBody {
        let response = try await placeOrder(body, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(OrderBody.self, from: Data(buffer: response.body))
    }

    func order(_ id: Int, token: String) async throws -> OrderBody {
        try await decode(OrderBody.self, "/api/orders/\(id)", token: token)
    }

    func reserved(token: String) async throws -> ReservedPortfolioBody {
        try await decode(ReservedPortfolioBody.self, "/api/portfolio", token: token)
    }
}

@Suite("Orders")
struct OrderTests {
    @Test("a limit buy rests with its cash reserved and fills at the quote once the price falls to its limit")
    func limitBuyFills() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("patient").token
            let placed = try await client.placeOrderOK(
                #"{"symbol":"aapl","side":"buy","quantity":10,"type":"limit","limitPrice":"140","timeInForce":"gtc"}"#, token: token)
            #expect(placed.status == "new" && placed.symbol == "AAPL" && placed.limitPrice == "140.00")
            #expect(placed.filledQuantity == 0 && placed.filledAveragePrice == nil && placed.tradeId == nil)
            var money = try await client.reserved(token: token)
            #expect(money.cash == "10000.00" && money.reserved == "1400.00" && money.buyingPower == "8600.00")
            #expect(try await client.decode(OrderPageBody.self, "/api/orders", token: token).items.map(\.id) == [placed.id])

            try await client.setPrice("AAPL", "145")
            #expect(try await client.order(placed.id, token: token).status == "new")

            try await client.setPrice("AAPL", "138.5")
            let filled = try await client.order(placed.id, token: token)
            #expect(filled.status == "filled" && filled.filledQuantity == 10 && filled.filledAveragePrice == "138.50")
            #expect(filled.tradeId != nil && filled.filledAt != nil)
            money = try await client.reserved(token: token)
            // 10 × 138.50 paid; the first trade's reward arrives with it.
            #expect(money.cash == "8715.00" && money.reserved == "0.00" && money.buyingPower == "8715.00")
            let trades = try await client.decode(TradePageBody.self, "/api/transactions", token: token).items
            #expect(trades.map(\.id) == [filled.tradeId] && trades.first?.price == "138.50")
            #expect(try await client.decode(OrderPageBody.self, "/api/orders", token: token).items.isEmpty)
            #expect(try await client.decode(OrderPageBody.self, "/api/orders?status=closed", token: token).items.map(\.id) == [placed.id])
        }
    }

    @Test("a preview says what an order would hold back, by the rule placing uses, and places nothing; what placing refuses it refuses")
    func preview() async throws {
        try await TestApp.run(configure: { $0.tradeFee = Decimal(string: "1.50")! }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("previewer").token
            struct PreviewBody: Decodable, Equatable { let reservedCash: String; let reservedShares: Int; let currency: String }
            func preview(_ body: String) async throws -> TestResponse {
                try await client.send(.post, "/api/orders/preview", body: body, token: token)
            }
            let limit = try await preview(#"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"140"}"#)
            #expect(limit.status == .ok, "\(String(buffer: limit.body))")
            #expect(try JSONDecoder().decode(PreviewBody.self, from: Data(buffer: limit.body))
                == PreviewBody(reservedCash: "1401.50", reservedShares: 0, currency: "USD"), "10 × 140 and the fee")
            #expect(try await client.decode(OrderPageBody.self, "/api/orders", token: token).items.isEmpty)
            #expect(try await client.reserved(token: token).buyingPower == "10000.00")
            // Placed, the order holds back exactly that.
            _ = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"140"}"#, token: token)
            #expect(try await client.reserved(token: token).reserved == "1401.50")

            _ = try await client.tradeOK("buy", "AAPL", 5, token: token)
            let sale = try await preview(#"{"symbol":"AAPL","side":"sell","quantity":2,"type":"stop","stopPrice":"100"}"#)
            #expect(try JSONDecoder().decode(PreviewBody.self, from: Data(buffer: sale.body)).reservedShares == 2)
            let tooMany = try await preview(#"{"symbol":"AAPL","side":"sell","quantity":6,"type":"limit","limitPrice":"500"}"#)
            #expect(try tooMany.status == .unprocessableContent && decodeProblem(tooMany).code == "insufficient_shares")
            let broke = try await preview(#"{"symbol":"AAPL","side":"buy","quantity":1000,"type":"limit","limitPrice":"140"}"#)
            #expect(try broke.status == .unprocessableContent && decodeProblem(broke).code == "insufficient_funds")
            let bad = try await preview(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit"}"#)
            #expect(try bad.status == .unprocessableContent && decodeProblem(bad).code == "validation_failed")
        }
    }

    @Test("a limit sell reserves its shares, which cannot be sold again meanwhile, and fills when the price rises")
    func limitSellReservesShares() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("seller").token
            _ = try await client.tradeOK("buy", "AAPL", 5, token: token)
            let order = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"sell","quantity":5,"type":"limit","limitPrice":"160"}"#, token: token)
            let sale = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
            #expect(try sale.status == .unprocessableContent && decodeProblem(sale).code == "insufficient_shares")
            let second = try await client.placeOrder(#"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"170"}"#, token: token)
            #expect(try decodeProblem(second).code == "insufficient_shares")

            try await client.setPrice("AAPL", "161")
            let filled = try await client.order(order.id, token: token)
            #expect(filled.status == "filled" && filled.filledAveragePrice == "161.00")
            let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: token)
            // 750 paid, 805 received, and the rewards of the first trade and the first profit.
            #expect(portfolio.cash == "10405.00" && portfolio.holdings.isEmpty)
        }
    }

    @Test("closing an order releases what it holds (SQL close_orders): a buy's cash back to buying power, a sale's shares back to the free shares, once")
    func closeOrdersReleases() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                try await client.seedTradingMarket()
                let token = try await client.register("closer").token
                _ = try await client.tradeOK("buy", "AAPL", 5, token: token)
                let buy = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":2,"type":"limit","limitPrice":"100"}"#, token: token)
                let sell = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"sell","quantity":3,"type":"limit","limitPrice":"170"}"#, token: token)
                try await database.withPool { pool in
                    func held() async throws -> [Decimal] {
                        try await pool.query(
                            """
                            SELECT p.reserved_cash, h.reserved_quantity::numeric, free_shares(h.quantity, h.reserved_quantity)::numeric
                            FROM portfolios p JOIN holdings h ON h.portfolio_id = p.id WHERE h.symbol = 'AAPL'
                            """
                        ).decode((Decimal, Decimal, Decimal).self).map { [$0.0, $0.1, $0.2] }.first ?? []
                    }
                    #expect(try await held() == [200, 3, 2], "2 × 100 held back, 3 of 5 shares")
                    let closed = try await pool.query("SELECT * FROM close_orders(ARRAY[\(buy.id), \(sell.id)]::int8[], 'expired', 'Test')")
                        .decodeColumn(Int.self)
                    #expect(closed == [buy.id, sell.id])
                    #expect(try await held() == [0, 0, 5])
                    let again = try await pool.query("SELECT * FROM close_orders(ARRAY[\(buy.id), \(sell.id)]::int8[], 'canceled', NULL)")
                        .decodeColumn(Int.self)
                    #expect(again.isEmpty, "orders no longer open are left alone")
                }
                let expired = try await client.order(sell.id, token: token)
                #expect(expired.status == "expired")
            }
        }
    }

    @Test("buying power: open orders and market trades never spend the same cash twice")
    func buyingPower() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("thrifty").token
            _ = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":60,"type":"limit","limitPrice":"140"}"#, token: token)
            let tooMuch = try await client.placeOrder(#"{"symbol":"AAPL","side":"buy","quantity":12,"type":"limit","limitPrice":"140"}"#, token: token)
            #expect(try tooMuch.status == .unprocessableContent && decodeProblem(tooMuch).code == "insufficient_funds")
            let market = try await client.trade("buy", #"{"symbol":"AAPL","amount":11}"#, token: token)
            #expect(try decodeProblem(market).code == "insufficient_funds")
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token)
            let money = try await client.reserved(token: token)
            // 1,500 spent, 8,400 reserved, and the first trade's reward of 100.
            #expect(money.cash == "8600.00" && money.reserved == "8400.00" && money.buyingPower == "200.00")
        }
    }

    @Test("a stop order is a market order once crossed; a stop-limit becomes a limit order and waits for its limit")
    func stops() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("stopper").token
            _ = try await client.tradeOK("buy", "ONE", 10, token: token)
            let stopBuy = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop","stopPrice":"160"}"#, token: token)
            let stopLimit = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop_limit","stopPrice":"160","limitPrice":"165"}"#, token: token)
            let stopSell = try await client.placeOrderOK(#"{"symbol":"ONE","side":"sell","quantity":10,"type":"stop","stopPrice":"0.9"}"#, token: token)
            #expect(stopBuy.stopPrice == "160.00" && stopLimit.limitPrice == "165.00")

            try await client.setPrice("AAPL", "170")
            #expect(try await client.order(stopBuy.id, token: token).filledAveragePrice == "170.00")
            // Triggered, but 170 is above its limit.
            #expect(try await client.order(stopLimit.id, token: token).status == "new")
            // A new stop-limit at 155 is not triggered: its stop was never crossed.
            try await client.setPrice("AAPL", "155")
            let fresh = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop_limit","stopPrice":"160","limitPrice":"165"}"#, token: token)
            #expect(try await client.order(stopLimit.id, token: token).filledAveragePrice == "155.00")
            #expect(try await client.order(fresh.id, token: token).status == "new")

            try await client.setPrice("ONE", "0.95")
            #expect(try await client.order(stopSell.id, token: token).status == "new")
            try await client.setPrice("ONE", "0.85")
            #expect(try await client.order(stopSell.id, token: token).filledAveragePrice == "0.85")
        }
    }

    @Test("cancelling releases the reservation; an order no longer open is 409 order_not_open; cancel all; others' orders are 404")
    func cancelling() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("canceller").token
            let other = try await client.register("other").token
            let order = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"100"}"#, token: token)
            #expect(try await client.delete("/api/orders/\(order.id)", token: other).status == .notFound)
            #expect(try await client.get("/api/orders/\(order.id)", token: other).status == .notFound)

            let cancel = try await client.delete("/api/orders/\(order.id)", token: token)
            #expect(cancel.status == .ok)
            let canceled = try JSONDecoder().decode(OrderBody.self, from: Data(buffer: cancel.body))
            #expect(canceled.status == "canceled" && canceled.canceledAt != nil)
            #expect(try await client.reserved(token: token).reserved == "0.00")
            let again = try await client.delete("/api/orders/\(order.id)", token: token)
            #expect(try again.status == .conflict && decodeProblem(again).code == "order_not_open")

            _ = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100"}"#, token: token)
            _ = try await client.placeOrderOK(#"{"symbol":"ONE","side":"buy","quantity":1,"type":"limit","limitPrice":"0.5"}"#, token: token)
            #expect(try await client.reserved(token: token).reserved == "100.50")
            let all = try await client.delete("/api/orders", token: token)
            struct Canceled: Decodable { let canceled: [OrderBody] }
            let body = try JSONDecoder().decode(Canceled.self, from: Data(buffer: all.body))
            #expect(body.canceled.count == 2 && body.canceled.allSatisfy { $0.status == "canceled" })
            #expect(try await client.reserved(token: token).reserved == "0.00")
            #expect(try await client.decode(OrderPageBody.self, "/api/orders?status=all", token: token).items.count == 3)
        }
    }

    @Test("replacing an open order: the old one closes as replaced and names its successor, the reservation moves, a refused replacement changes nothing")
    func replacing() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("replacer").token
            let other = try await client.register("bystander").token
            let order = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"100"}"#, token: token)
            #expect(try await client.send(.patch, "/api/orders/\(order.id)", body: #"{"quantity":5}"#, token: other).status == .notFound)

            let response = try await client.send(
                .patch, "/api/orders/\(order.id)", body: #"{"quantity":20,"limitPrice":"90.5","timeInForce":"gtc","clientOrderId":"second"}"#,
                token: token)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let replacement = try JSONDecoder().decode(OrderBody.self, from: Data(buffer: response.body))
            #expect(replacement.id != order.id && replacement.status == "new" && replacement.replacesOrderId == order.id)
            #expect(replacement.quantity == 20 && replacement.limitPrice == "90.50" && replacement.timeInForce == "gtc")
            #expect(replacement.symbol == "AAPL" && replacement.side == "buy" && replacement.type == "limit")
            #expect(replacement.clientOrderId == "second")
            let replaced = try await client.order(order.id, token: token)
            #expect(replaced.status == "replaced" && replaced.replacedByOrderId == replacement.id && replaced.replacedAt != nil)
            // The old reservation (1,000) is released and the new one (20 × 90.50) held.
            #expect(try await client.reserved(token: token).reserved == "1810.00")

            // More than the cash covers: refused, and the replacement stays open as it was.
            let tooBig = try await client.send(.patch, "/api/orders/\(replacement.id)", body: #"{"quantity":1000}"#, token: token)
            #expect(try tooBig.status == .unprocessableContent && decodeProblem(tooBig).code == "insufficient_funds")
            #expect(try await client.order(replacement.id, token: token).status == "new")
            #expect(try await client.reserved(token: token).reserved == "1810.00")
            #expect(try await client.decode(OrderPageBody.self, "/api/orders", token: token).items.map(\.id) == [replacement.id])

            for (body, status, code) in [
                (#"{"timeInForce":"ioc"}"#, HTTPResponse.Status.unprocessableContent, "validation_failed"),
                (#"{"stopPrice":"95"}"#, .unprocessableContent, "validation_failed"),
                (#"{"clientOrderId":"second"}"#, .unprocessableContent, "idempotency_key_reused"),
            ] {
                let refused = try await client.send(.patch, "/api/orders/\(replacement.id)", body: body, token: token)
                #expect(try refused.status == status && decodeProblem(refused).code == code, "\(body)")
            }
            let again = try await client.send(.patch, "/api/orders/\(order.id)", body: #"{"quantity":5}"#, token: token)
            #expect(try again.status == .conflict && decodeProblem(again).code == "order_not_open")

            // The replacement fills like any order once the price reaches its limit.
            try await client.setPrice("AAPL", "90")
            #expect(try await client.order(replacement.id, token: token).status == "filled")
            #expect(try await client.reserved(token: token).reserved == "0.00")
        }
    }

    @Test("a clientOrderId makes placing idempotent: the same body gets the same order, another body 422, racing repeats one order")
    func clientOrderIDs() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("repeater").token
            let body = #"{"symbol":"AAPL","side":"buy","quantity":2,"type":"limit","limitPrice":"100","clientOrderId":"my-1"}"#
            let first = try await client.placeOrderOK(body, token: token)
            #expect(first.clientOrderId == "my-1")
            let repeated = try await client.placeOrder(body, token: token)
            #expect(repeated.status == .ok)
            #expect(try JSONDecoder().decode(OrderBody.self, from: Data(buffer: repeated.body)).id == first.id)
            let changed = try await client.placeOrder(body.replacingOccurrences(of: "\"quantity\":2", with: "\"quantity\":3"), token: token)
            #expect(try changed.status == .unprocessableContent && decodeProblem(changed).code == "idempotency_key_reused")
            #expect(try await client.decode(OrderBody.self, "/api/orders/by-client-id/my-1", token: token).id == first.id)
            #expect(try await client.get("/api/orders/by-client-id/nope", token: token).status == .notFound)

            // Eight at once, for a resting and for a market order: one order each.
            for (name, json) in [("race-rest", #""type":"limit","limitPrice":"100""#), ("race-market", #""type":"market""#)] {
                let racing = #"{"symbol":"AAPL","side":"buy","quantity":1,\#(json),"clientOrderId":"\#(name)"}"#
                let ids = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            let response = try await client.placeOrder(racing, token: token)
                            #expect(response.status == .created || response.status == .ok, "\(String(buffer: response.body))")
                            return try JSONDecoder().decode(OrderBody.self, from: Data(buffer: response.body)).id
                        }
                    }
                    return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
                }
                #expect(ids.count == 1)
            }
            let all = try await client.decode(OrderPageBody.self, "/api/orders?status=all", token: token).items
            #expect(all.count == 3)
            #expect(try await client.reserved(token: token).reserved == "300.00")
            #expect(try await client.decode(TradePageBody.self, "/api/transactions", token: token).items.count == 1)

            // A repeat that could not be placed again (the first holds the cash now) still
            // answers the first order.
            let spender = try await client.register("all-in").token
            let power = try #require(Decimal(string: try await client.reserved(token: spender).buyingPower))
            let quantity = NSDecimalNumber(decimal: power).intValue - 10
            let allIn = #"{"symbol":"AAPL","side":"buy","quantity":\#(quantity),"type":"limit","limitPrice":"1","clientOrderId":"all-in"}"#
            let placed = try await client.placeOrderOK(allIn, token: spender)
            let again = try await client.placeOrder(allIn, token: spender)
            #expect(again.status == .ok, "\(String(buffer: again.body))")
            #expect(try JSONDecoder().decode(OrderBody.self, from: Data(buffer: again.body)).id == placed.id)
            let other = try await client.placeOrder(allIn.replacingOccurrences(of: "\"limitPrice\":\"1\"", with: "\"limitPrice\":\"2\""), token: spender)
            #expect(try other.status == .unprocessableContent && decodeProblem(other).code == "idempotency_key_reused")
        }
    }

    @Test("bad orders are refused with a clear code and change nothing", arguments: [
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"market","stopPrice":"10"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop","stopPrice":"0"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"-5"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"1000000000"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100.12345"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","timeInForce":"forever"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"trailing_stop"}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"hold","quantity":1}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":0}"#, 422, "validation_failed"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"clientOrderId":""}"#, 422, "validation_failed"),
        (#"{"symbol":"NOPE","side":"buy","quantity":1,"type":"limit","limitPrice":"1"}"#, 404, "unknown_symbol"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"portfolioId":999999,"type":"limit","limitPrice":"1"}"#, 404, "not_found"),
        (#"{"symbol":"AAPL","side":"buy","quantity":100,"type":"limit","limitPrice":"101"}"#, 422, "insufficient_funds"),
        (#"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"101"}"#, 422, "insufficient_shares"),
        (#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"abc"}"#, 422, "validation_failed"),
    ])
    func badOrders(_ order: (body: String, status: Int, code: String)) async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("careful").token
            let response = try await client.placeOrder(order.body, token: token)
            #expect(response.status.code == order.status)
            #expect(try decodeProblem(response).code == order.code)
            #expect(try await client.decode(OrderPageBody.self, "/api/orders?status=all", token: token).items.isEmpty)
            let money = try await client.reserved(token: token)
            #expect(money.cash == "10000.00" && money.reserved == "0.00")
        }
    }

    @Test("ioc and fok fill at once or are cancelled; market orders fill at once; buy and sell appear as market orders")
    func immediateOrders() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("hasty").token
            let ioc = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"140","timeInForce":"ioc"}"#, token: token)
            #expect(ioc.status == "canceled" && ioc.tradeId == nil)
            #expect(try await client.reserved(token: token).reserved == "0.00")
            let fok = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"155","timeInForce":"fok"}"#, token: token)
            #expect(fok.status == "filled" && fok.filledAveragePrice == "150.00")
            let market = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"sell","quantity":1}"#, token: token)
            #expect(market.status == "filled" && market.type == "market" && market.timeInForce == "day")
            let trade = try await client.tradeOK("buy", "ONE", 3, token: token)
            let closed = try await client.decode(OrderPageBody.self, "/api/orders?status=closed", token: token).items
            #expect(closed.first?.tradeId == trade.trade.id && closed.first?.type == "market" && closed.first?.filledAveragePrice == "1.00")
            #expect(closed.map(\.status) == ["filled", "filled", "filled", "canceled"])
        }
    }

    @Test("cancel racing a fill: exactly one wins for each order, and the loser reports what really happened")
    func cancelRacesFill() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("racer").token
            var ids: [Int] = []
            for _ in 0..<30 {
                ids.append(try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"140"}"#, token: token).id)
            }
            let cancels = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status)?.self) { group in
                group.addTask {
                    try await client.setPrice("AAPL", "139")
                    return nil
                }
                for id in ids {
                    group.addTask { (id, try await client.delete("/api/orders/\(id)", token: token).status) }
                }
                return try await group.reduce(into: [Int: HTTPResponse.Status]()) { if let (id, status) = $1 { $0[id] = status } }
            }
            var filled = 0
            for id in ids {
                let order = try await client.order(id, token: token)
                switch cancels[id] {
                case .ok: #expect(order.status == "canceled" && order.tradeId == nil)
                case .conflict:
                    #expect(order.status == "filled" && order.tradeId != nil)
                    filled += 1
                default: Issue.record("cancel answered \(String(describing: cancels[id]))")
                }
            }
            let trades = try await client.decode(TradePageBody.self, "/api/transactions?limit=200", token: token).items
            #expect(trades.count == filled)
            let money = try await client.reserved(token: token)
            #expect(money.reserved == "0.00")
            let reward = filled > 0 ? 100 : 0
            #expect(Decimal(string: money.cash) == Decimal(10_000 + reward) - Decimal(139 * filled))
        }
    }

    @Test("two server processes matching the same open orders fill each, and tell its owner, exactly once")
    func twoMatchers() async throws {
        try await TemporaryDatabase.with { database in
            let fast: @Sendable (inout AppConfiguration) -> Void = { $0.orderSweepInterval = .milliseconds(20) }
            try await TestApp.run(on: database, configure: fast) { first in
                try await first.seedTradingMarket()
                let token = try await first.register("twice").token
                for _ in 0..<40 {
                    _ = try await first.placeOrderOK(#"{"symbol":"ONE","side":"buy","quantity":1,"type":"limit","limitPrice":"0.9"}"#, token: token)
                }
                try await TestApp.run(on: database, configure: fast) { second in
                    // The first process matches after the quote; both sweep every 20 ms meanwhile.
                    try await first.setPrice("ONE", "0.8")
                    for _ in 0..<100 {
                        if try await second.decode(OrderPageBody.self, "/api/orders", token: token).items.isEmpty { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
                let orders = try await first.decode(OrderPageBody.self, "/api/orders?status=all&limit=200", token: token).items
                #expect(orders.count == 40 && orders.allSatisfy { $0.status == "filled" })
                #expect(Set(orders.compactMap(\.tradeId)).count == 40)
                #expect(try await first.decode(TradePageBody.self, "/api/transactions?limit=200", token: token).items.count == 40)
                // 40 × 0.80 paid, and the rewards of the first and the tenth trade.
                #expect(try await first.reserved(token: token).cash == "10568.00")
                // One notification per fill, whichever process filled it.
                let notices = try await first.decode(NotificationPageBody.self, "/api/notifications?limit=100", token: token).items
                #expect(notices.filter { $0.title == "Order to buy 1 ONE filled at $0.80" }.count == 40)
            }
        }
    }

    @Test("open orders and market trades racing for the same cash never promise more than there is")
    func reservationRacesMarketTrades() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("contested").token
            let statuses = try await withThrowingTaskGroup(of: (String, HTTPResponse.Status).self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        let body = #"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"140"}"#
                        return ("order", try await client.placeOrder(body, token: token).status)
                    }
                    group.addTask { ("trade", try await client.trade("buy", #"{"symbol":"AAPL","amount":10}"#, token: token).status) }
                }
                return try await group.reduce(into: [(String, HTTPResponse.Status)]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0.1 == .created || $0.1 == .ok || $0.1 == .unprocessableContent })
            let orders = statuses.filter { $0 == ("order", .created) }.count
            let trades = statuses.filter { $0 == ("trade", .ok) }.count
            // 10,000 and the first trade's reward of 100 cover at most six of either.
            #expect(orders + trades >= 6 && 1_400 * orders + 1_500 * trades <= 10_100)
            let money = try await client.reserved(token: token)
            #expect(Decimal(string: money.reserved) == Decimal(1_400 * orders))
            #expect(Decimal(string: money.buyingPower)! >= 0)
        }
    }

    @Test("leaving a league cancels the open orders of its league portfolio")
    func leavingCancels() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedTradingMarket()
            let owner = try await client.register("host").token
            let member = try await client.register("leaver").token
            let (league, _) = try await client.leagueWithRules("{}", token: owner)
            #expect(try await client.join(league.code, token: member).status == .ok)
            let portfolios = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: member)
            let portfolio = try #require(portfolios.first { $0.leagueId == league.id }).id
            let order = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"100","portfolioId":\#(portfolio)}"#, token: member)
            #expect(try await client.delete("/api/leagues/leave/\(league.id)", token: member).status == .noContent)
            let closed = try await client.waitForOrder(order.id, token: member)
            #expect(closed.status == "canceled" && closed.rejectReason == "The portfolio was closed.")
        }
    }

    @Test("NYSE hours: ioc is 409 market_closed while closed; a market order waits for the open; day orders expire at the close; fills and expiries of resting orders reach Notifications once")
    func marketHours() async throws {
        let clock = MovableDate("2026-11-28T15:00:00Z")  // a Saturday
        try await TestApp.run(configure: {
            $0.marketHours = .nyse
            $0.clock = clock.reader
            $0.orderSweepInterval = .milliseconds(50)
        }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("weekender").token
            let ioc = try await client.placeOrder(#"{"symbol":"AAPL","side":"buy","quantity":1,"timeInForce":"ioc"}"#, token: token)
            #expect(try ioc.status == .conflict && decodeProblem(ioc).code == "market_closed")
            let waiting = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":2}"#, token: token)
            #expect(waiting.status == "new")
            #expect(try await client.reserved(token: token).reserved == "300.00")
            let day = try await client.placeOrderOK(#"{"symbol":"ONE","side":"buy","quantity":1,"type":"limit","limitPrice":"0.5"}"#, token: token)
            try await client.setPrice("AAPL", "151")
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await client.order(waiting.id, token: token).status == "new")

            // Monday 10:00 in New York: the sweep fills the waiting market order at the open.
            clock.set("2026-11-30T15:00:00Z")
            let filled = try await client.waitForOrder(waiting.id, token: token)
            #expect(filled.status == "filled" && filled.filledAveragePrice == "151.00")
            #expect(try await client.order(day.id, token: token).status == "new")

            // After Monday's close the sweep expires the day order.
            clock.set("2026-11-30T21:00:01Z")
            let expired = try await client.waitForOrder(day.id, token: token)
            #expect(expired.status == "expired" && expired.expiredAt != nil)
            #expect(try await client.reserved(token: token).reserved == "0.00")

            // Both happened while nobody looked: each is a notification, once, whatever the sweeps.
            try await Task.sleep(for: .milliseconds(200))
            let orderNotices = { @Sendable in
                try await client.decode(NotificationPageBody.self, "/api/notifications", token: token).items
                    .filter { $0.title.hasPrefix("Order") }
            }
            let inbox = try await orderNotices()
            #expect(inbox.map(\.title) == ["Order to buy 1 ONE expired", "Order to buy 2 AAPL filled at $151.00"])
            #expect(inbox.last?.body == "Your market order to buy 2 AAPL filled at $151.00 a share in your personal portfolio.")
            #expect(inbox.first?.body == "Your limit order to buy 1 ONE expired unfilled in your personal portfolio; what it held back is free again.")
            // A market order filled as it is placed (Tuesday 10:00) tells nobody: its owner is looking.
            clock.set("2026-12-01T15:00:00Z")
            #expect(try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","quantity":1}"#, token: token).status == "filled")
            #expect(try await orderNotices().count == 2)
        }
    }
}

/// A wall clock tests set by hand.
final class MovableDate: Sendable {
    private let date: Mutex<Date>

    init(_ moment: String) {
        date = Mutex(ISO8601DateFormatter().date(from: moment)!)
    }

    func set(_ moment: String) {
        let next = ISO8601DateFormatter().date(from: moment)!
        date.withLock { $0 = next }
    }

    var reader: @Sendable () -> Date { { self.date.withLock { $0 } } }
}

extension TestClientProtocol {
    /// The order once it is no longer open (waiting up to five seconds for a sweep).
    func waitForOrder(_ id: Int, token: String) async throws -> OrderBody {
        var order = try await self.order(id, token: token)
        for _ in 0..<100 where order.status == "new" {
            try await Task.sleep(for: .milliseconds(50))
            order = try await self.order(id, token: token)
        }
        return order
    }
}
