import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

/// An order with its trail.
struct TrailingOrderBody: Decodable {
    let id: Int
    let type: String
    let status: String
    let stopPrice: String?
    let trailPercent: String?
    let trailPrice: String?
    let hwm: String?
    let filledAveragePrice: String?
}

extension TestClientProtocol {
    func trailingOrder(_ id: Int, token: String) async throws -> TrailingOrderBody {
        try await decode(TrailingOrderBody.self, "/api/orders/\(id)", token: token)
    }
}

@Suite("Trailing stops")
struct TrailingStopTests {
    @Test("a trailing sell's stop follows the highest price since placing, by a percentage, and fills once the price falls to it")
    func trailingSell() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("trailer").token
            _ = try await client.tradeOK("buy", "AAPL", 10, token: token)
            let placed = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"sell","quantity":10,"type":"trailing_stop","trailPercent":"1","timeInForce":"gtc"}"#, token: token)
            // 150 × (1 − 1/100) = 148.50.
            var order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.status == "new" && order.hwm == "150.00" && order.stopPrice == "148.50" && order.trailPercent == "1")
            // A new high moves the stop up: 152 × 0.99 = 150.48.
            try await client.setPrice("AAPL", "152")
            order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.hwm == "152.00" && order.stopPrice == "150.48")
            // A fall that stays above the stop moves nothing.
            try await client.setPrice("AAPL", "151")
            order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.status == "new" && order.hwm == "152.00" && order.stopPrice == "150.48")
            // At 150.40 the stop is crossed: a market sale at that price.
            try await client.setPrice("AAPL", "150.40")
            order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.status == "filled" && order.filledAveragePrice == "150.40")
            // The fill: an order's, 10 sold at 150.40 for 1,504.
            struct Page: Decodable { let items: [PricedTradeBody] }
            let sale = try #require(try await client.decode(Page.self, "/api/transactions", token: token).items.first)
            #expect(sale.side == "sell" && sale.quantity == 10 && sale.amount == "1504.00" && sale.source == "order")
            #expect(try await client.decode(PortfolioBody.self, "/api/portfolio", token: token).holdings.isEmpty)
        }
    }

    @Test("a trailing buy's stop follows the lowest price by an amount, reserves cash at its first stop, and fills when the price rises to it")
    func trailingBuy() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("dipbuyer").token
            let placed = try await client.placeOrderOK(
                #"{"symbol":"AAPL","side":"buy","quantity":10,"type":"trailing_stop","trailPrice":"2","timeInForce":"gtc"}"#, token: token)
            var order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.hwm == "150.00" && order.stopPrice == "152.00" && order.trailPrice == "2.00")
            // The most it can cost: 10 at its first stop, 152.
            #expect(try await client.reserved(token: token).reserved == "1520.00")
            try await client.setPrice("AAPL", "145")
            order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.hwm == "145.00" && order.stopPrice == "147.00")
            try await client.setPrice("AAPL", "146.99")
            #expect(try await client.trailingOrder(placed.id, token: token).status == "new")
            try await client.setPrice("AAPL", "147.50")
            order = try await client.trailingOrder(placed.id, token: token)
            #expect(order.status == "filled" && order.filledAveragePrice == "147.50")
            #expect(try await client.reserved(token: token).reserved == "0.00")
        }
    }

    @Test("a trailing stop needs one trail, in range, and takes no stop or limit price; other types take no trail")
    func badTrails() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("badtrail").token
            _ = try await client.tradeOK("buy", "AAPL", 1, token: token)
            for body in [#""type":"trailing_stop""#, #""type":"trailing_stop","trailPercent":"1","trailPrice":"1""#,
                         #""type":"trailing_stop","trailPercent":"100""#, #""type":"trailing_stop","trailPercent":"0""#,
                         #""type":"trailing_stop","trailPrice":"-1""#, #""type":"trailing_stop","trailPercent":"1","stopPrice":"140""#,
                         #""type":"trailing_stop","trailPercent":"1","limitPrice":"140""#, #""type":"limit","limitPrice":"140","trailPercent":"1""#,
                         #""type":"trailing_stop","trailPercent":"0.00001""#] {
                let response = try await client.placeOrder(#"{"symbol":"AAPL","side":"sell","quantity":1,\#(body)}"#, token: token)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(body)")
            }
            #expect(try await client.reserved(token: token).reserved == "0.00")
        }
    }

    @Test("under /v2 a trailing stop has Alpaca's names: trail_percent or trail_price, hwm and the stop now; PATCH trail changes it")
    func alpacaTrailingStop() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("trailbot").token
            _ = try await client.tradeOK("buy", "AAPL", 5, token: token)
            let key = try await client.apiKey(token: token)
            let placed = try await client.alpaca(.post, "/v2/orders", key: key, body:
                #"{"symbol":"AAPL","qty":"5","side":"sell","type":"trailing_stop","trail_percent":"2","time_in_force":"gtc"}"#)
            #expect(placed.status == .ok, "\(String(buffer: placed.body))")
            let order = try #require(try JSONSerialization.jsonObject(with: Data(buffer: placed.body)) as? [String: Any])
            #expect(order["type"] as? String == "trailing_stop" && order["trail_percent"] as? String == "2")
            #expect(order["hwm"] as? String == "150.00" && order["stop_price"] as? String == "147.00")
            // A new trail replaces the order: 150 × 0.95 = 142.50.
            let id = try #require(order["id"] as? String)
            let replaced = try await client.alpaca(.patch, "/v2/orders/\(id)", key: key, body: #"{"trail":"5"}"#)
            #expect(replaced.status == .ok, "\(String(buffer: replaced.body))")
            let replacement = try #require(try JSONSerialization.jsonObject(with: Data(buffer: replaced.body)) as? [String: Any])
            #expect(replacement["trail_percent"] as? String == "5" && replacement["stop_price"] as? String == "142.50")
        }
    }
}
