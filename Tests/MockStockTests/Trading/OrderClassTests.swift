import Foundation
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Testing
import TestSupport

/// An order with its class and legs, as `/api/orders` shows it.
struct ClassedOrderBody: Decodable {
    let id: Int
    let side: String
    let type: String
    let quantity: Int
    let limitPrice: String?
    let stopPrice: String?
    let status: String
    let filledAveragePrice: String?
    let rejectReason: String?
    let orderClass: String
    let legs: [ClassedOrderBody]
}

extension TestClientProtocol {
    func placeClassed(_ body: String, token: String) async throws -> ClassedOrderBody {
        let response = try await placeOrder(body, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try JSONDecoder().decode(ClassedOrderBody.self, from: Data(buffer: response.body))
    }

    func classed(_ id: Int, token: String) async throws -> ClassedOrderBody {
        try await decode(ClassedOrderBody.self, "/api/orders/\(id)", token: token)
    }

    /// The AAPL shares the personal portfolio holds.
    func aaplShares(token: String) async throws -> Int {
        try await decode(PortfolioBody.self, "/api/portfolio", token: token).holdings.first { $0.symbol == "AAPL" }?.quantity ?? 0
    }
}

@Suite("Brackets, OCO and OTO")
struct OrderClassTests {
    @Test("a bracket buys, then holds its shares once for a take-profit and a stop-loss; the take-profit fills and cancels the stop-loss")
    func bracket() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("bracketeer").token
            let placed = try await client.placeClassed(
                #"{"symbol":"AAPL","side":"buy","quantity":10,"type":"limit","limitPrice":"151","timeInForce":"gtc","orderClass":"bracket","takeProfit":{"limitPrice":"160"},"stopLoss":{"stopPrice":"140"}}"#,
                token: token)
            // The entry filled at once at 150; its legs are open now, a limit sale at 160 and a stop at 140.
            #expect(placed.orderClass == "bracket" && placed.status == "filled" && placed.filledAveragePrice == "150.00")
            #expect(placed.legs.map(\.status) == ["new", "new"])
            #expect(placed.legs.map(\.type) == ["limit", "stop"] && placed.legs.map(\.side) == ["sell", "sell"])
            #expect(placed.legs.map(\.limitPrice) == ["160.00", nil] && placed.legs.map(\.stopPrice) == [nil, "140.00"])
            #expect(placed.legs.allSatisfy { $0.quantity == 10 && $0.orderClass == "bracket" })
            // The 10 shares are held for the legs (once: the entry's fill would have failed otherwise); none is free to sell.
            let sale = try await client.trade("sell", #"{"symbol":"AAPL","amount":1}"#, token: token)
            #expect(try sale.status == .unprocessableContent && decodeProblem(sale).code == "insufficient_shares")
            // Both legs are listed among the open orders.
            let open = try await client.decode(OrderPageBody.self, "/api/orders?status=open", token: token).items
            #expect(Set(open.map(\.id)) == Set(placed.legs.map(\.id)))

            try await client.setPrice("AAPL", "161.00")
            let after = try await client.classed(placed.id, token: token)
            #expect(after.legs.map(\.status) == ["filled", "canceled"])
            #expect(after.legs[0].filledAveragePrice == "161.00" && after.legs[1].rejectReason == "The other leg filled.")
            #expect(try await client.aaplShares(token: token) == 0)
            // The history: the entry's buy at 150, the take-profit's sale at 161, both made by orders.
            struct Page: Decodable { let items: [PricedTradeBody] }
            let trades = try await client.decode(Page.self, "/api/transactions", token: token).items
            #expect(trades.map(\.side) == ["sell", "buy"] && trades.map(\.price) == ["161.00", "150.00"])
            #expect(trades.map(\.source) == ["order", "order"] && trades.map(\.quantity) == [10, 10])
            #expect(try await client.reserved(token: token).reserved == "0.00")
        }
    }

    @Test("a bracket's legs wait, held, while its entry rests, and go with it when it is cancelled; an OTO has one leg")
    func heldLegs() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("waiter").token
            let resting = try await client.placeClassed(
                #"{"symbol":"AAPL","side":"buy","quantity":5,"type":"limit","limitPrice":"145","timeInForce":"gtc","orderClass":"bracket","takeProfit":{"limitPrice":"155"},"stopLoss":{"stopPrice":"135","limitPrice":"134"}}"#,
                token: token)
            #expect(resting.status == "new" && resting.legs.map(\.status) == ["held", "held"])
            #expect(resting.legs.map(\.type) == ["limit", "stop_limit"])
            // A held leg is not cancelled alone; the entry takes its legs with it.
            let alone = try await client.delete("/api/orders/\(resting.legs[0].id)", token: token)
            #expect(alone.status == .conflict)
            #expect(try await client.delete("/api/orders/\(resting.id)", token: token).status == .ok)
            let cancelled = try await client.classed(resting.id, token: token)
            #expect(cancelled.status == "canceled" && cancelled.legs.map(\.status) == ["canceled", "canceled"])
            #expect(try await client.reserved(token: token).reserved == "0.00")

            // An OTO: a market buy with a stop-loss alone, which opens when the buy fills.
            let oto = try await client.placeClassed(
                #"{"symbol":"AAPL","side":"buy","quantity":3,"orderClass":"oto","stopLoss":{"stopPrice":"120"}}"#, token: token)
            #expect(oto.status == "filled" && oto.legs.map(\.status) == ["new"] && oto.legs.map(\.type) == ["stop"])
            try await client.setPrice("AAPL", "119.00")
            #expect(try await client.classed(oto.id, token: token).legs.map(\.status) == ["filled"])
            #expect(try await client.aaplShares(token: token) == 0)
        }
    }

    @Test("an OCO sells shares held at a take-profit or a stop-loss, holding them once; the stop-loss fills and cancels the take-profit")
    func oco() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("ococo").token
            _ = try await client.trade("buy", #"{"symbol":"AAPL","amount":10}"#, token: token)
            let oco = try await client.placeClassed(
                #"{"symbol":"AAPL","side":"sell","quantity":10,"type":"limit","timeInForce":"gtc","orderClass":"oco","takeProfit":{"limitPrice":"170"},"stopLoss":{"stopPrice":"140"}}"#,
                token: token)
            #expect(oco.orderClass == "oco" && oco.status == "new" && oco.limitPrice == "170.00")
            #expect(oco.legs.map(\.status) == ["new"] && oco.legs.map(\.stopPrice) == ["140.00"])
            // Held once: a limit sale of 1 more is refused.
            let more = try await client.placeOrder(#"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"200"}"#, token: token)
            #expect(try more.status == .unprocessableContent && decodeProblem(more).code == "insufficient_shares")
            try await client.setPrice("AAPL", "139.00")
            let after = try await client.classed(oco.id, token: token)
            #expect(after.status == "canceled" && after.rejectReason == "The other leg filled.")
            #expect(after.legs.map(\.status) == ["filled"] && after.legs[0].filledAveragePrice == "139.00")
            #expect(try await client.aaplShares(token: token) == 0)
            struct Page: Decodable { let items: [PricedTradeBody] }
            let trades = try await client.decode(Page.self, "/api/transactions", token: token).items
            #expect(trades.first?.side == "sell" && trades.first?.price == "139.00" && trades.first?.amount == "1390.00")
        }
    }

    @Test("orders with legs are checked as Alpaca checks them, and refused with 422, placing nothing")
    func refusals() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("strict").token
            _ = try await client.trade("buy", #"{"symbol":"AAPL","amount":10}"#, token: token)
            let bracket = #""orderClass":"bracket","takeProfit":{"limitPrice":"160"},"stopLoss":{"stopPrice":"140"}"#
            for body in [
                #"{"symbol":"AAPL","side":"sell","quantity":1,\#(bracket)}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"orderClass":"bracket","takeProfit":{"limitPrice":"160"}}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"orderClass":"bracket","takeProfit":{"limitPrice":"140"},"stopLoss":{"stopPrice":"150"}}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"165",\#(bracket)}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"stop","stopPrice":"155",\#(bracket)}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"timeInForce":"ioc",\#(bracket)}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"takeProfit":{"limitPrice":"160"}}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"orderClass":"oto","takeProfit":{"limitPrice":"160"},"stopLoss":{"stopPrice":"140"}}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"type":"limit","limitPrice":"160","orderClass":"oco","takeProfit":{"limitPrice":"160"},"stopLoss":{"stopPrice":"140"}}"#,
                #"{"symbol":"AAPL","side":"sell","quantity":1,"type":"limit","limitPrice":"161","orderClass":"oco","takeProfit":{"limitPrice":"160"},"stopLoss":{"stopPrice":"140"}}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"orderClass":"iceberg"}"#,
                #"{"symbol":"AAPL","side":"buy","quantity":1,"orderClass":"bracket","takeProfit":{"limitPrice":"-1"},"stopLoss":{"stopPrice":"140"}}"#,
            ] {
                let response = try await client.placeOrder(body, token: token)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(body)")
            }
            #expect(try await client.decode(OrderPageBody.self, "/api/orders?status=all", token: token).items.count == 1)
            // A leg is not replaced: cancelled and placed anew instead.
            let oco = try await client.placeClassed(
                #"{"symbol":"AAPL","side":"sell","quantity":10,"type":"limit","orderClass":"oco","takeProfit":{"limitPrice":"170"},"stopLoss":{"stopPrice":"140"}}"#,
                token: token)
            let patch = try await client.send(.patch, "/api/orders/\(oco.legs[0].id)", body: #"{"stopPrice":"130"}"#, token: token)
            #expect(try patch.status == .unprocessableContent && decodeProblem(patch).code == "validation_failed")
        }
    }
}
