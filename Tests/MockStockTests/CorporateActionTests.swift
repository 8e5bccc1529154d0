import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import MockStock
import Postgres
import Testing
import TestSupport

struct CorporateActionBody: Decodable, Equatable {
    let id: Int
    let symbol: String
    let kind: String
    let exDate: String
    let ratio: String?
    let amount: String?
    let source: String
}

struct CorporateActionListBody: Decodable {
    let items: [CorporateActionBody]
}

struct AdjustedChartBody: Decodable {
    struct Point: Decodable {
        let date: String
        let close: String
    }

    let adjusted: String
    let points: [Point]

    /// The largest day-to-day move of the close, as a fraction.
    var largestMove: Double {
        let closes = points.compactMap { Double($0.close) }
        return zip(closes, closes.dropFirst()).map { abs($1 / $0 - 1) }.max() ?? 0
    }
}

struct StockDetailBody: Decodable {
    let price: String
    let yearChangePercent: String?
    let yearHigh: String?
    let yearLow: String?
}

@Suite("Corporate actions")
struct CorporateActionTests {
    /// The demo market (real prices 2018-04-23 .. 2021-04-21) seeded as `make run` does.
    static func withDemoMarket(_ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void) async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let seeder = MarketSeeder(pool: pool)
            let root = TestApp.repositoryRoot.appendingPathComponent("data")
            for file in ["sp500-constituents.csv", "extra-instruments.csv"] {
                _ = try await seeder.seedInstruments(csv: String(contentsOf: root.appendingPathComponent(file), encoding: .utf8))
            }
            _ = try await seeder.seedPrices(try FileChunks(path: root.appendingPathComponent("demo-prices-daily.csv.gz").path))
            await pool.close()
            try await TestApp.run(on: database, body)
        }
    }

    @Test("Apple across its 4-for-1 split of 2020-08-31: no cliff in the chart, a split-adjusted year and 52-week range")
    func appleSplit() async throws {
        try await Self.withDemoMarket { client in
            let token = try await client.register("analyst").token
            let chart = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y", token: token)
            #expect(chart.adjusted == "split" && chart.points.last?.date == "2021-04-21")
            #expect(chart.largestMove < 0.15)
            // As traded, the split is a 75 % fall in a day.
            let raw = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y&adjusted=none", token: token)
            #expect(raw.largestMove > 0.7)
            // Total return: the last close is today's price; earlier ones are lower still (dividends paid since).
            let total = try await client.decode(AdjustedChartBody.self, "/api/stock/AAPL/chart?range=1y&adjusted=total", token: token)
            #expect(total.points.last?.close == chart.points.last?.close)
            #expect(Double(total.points[0].close)! < Double(chart.points[0].close)!)

            let stock = try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: token)
            // 133.50 against 268.37 / 4 = 67.0925 a year earlier: +98.98 %, not −50 %.
            #expect(stock.price == "133.50" && stock.yearChangePercent == "98.98")
            #expect(Double(stock.yearHigh!)! < 150 && Double(stock.yearLow!)! > 50)

            let actions = try await client.decode(CorporateActionListBody.self, "/api/stock/AAPL/corporate-actions", token: token)
            #expect(actions.items.contains { $0.kind == "split" && $0.exDate == "2020-08-31" && $0.ratio == "4" && $0.source == "prices" })
            #expect(actions.items.contains { $0.kind == "dividend" && $0.amount == "0.205" })
            #expect(actions.items.map(\.exDate) == actions.items.map(\.exDate).sorted(by: >))
            let bad = try await client.get("/api/stock/AAPL/chart?range=1y&adjusted=maybe", token: token)
            #expect(try bad.status == .unprocessableContent && decodeProblem(bad).code == "validation_failed")
        }
    }

    @Test("admins add splits and dividends, which adjust charts; bad ones are 422 or 404 and change nothing")
    func adminActions() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            let player = try await client.register("viewer").token
            let before = try await client.decode(AdjustedChartBody.self, "/api/stock/MSFT/chart?range=1m", token: player)
            #expect(before.points.allSatisfy { $0.close == "250.00" })

            for body in [#"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"0"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"-2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"2","amount":"1"}"#,
                         #"{"symbol":"MSFT","kind":"dividend","exDate":"2021-04-10","amount":"-1"}"#,
                         #"{"symbol":"MSFT","kind":"merger","exDate":"2021-04-10","ratio":"2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"2021-02-30","ratio":"2"}"#,
                         #"{"symbol":"MSFT","kind":"split","exDate":"tomorrow","ratio":"2"}"#] {
                let response = try await client.send(.post, "/api/admin/corporate-actions", body: body, token: admin)
                #expect(try response.status == .unprocessableContent && decodeProblem(response).code == "validation_failed", "\(body)")
            }
            let unknown = try await client.send(.post, "/api/admin/corporate-actions",
                                                body: #"{"symbol":"NOPE","kind":"split","exDate":"2021-04-10","ratio":"2"}"#, token: admin)
            #expect(try decodeProblem(unknown).code == "unknown_symbol")
            let notAdmin = try await client.send(.post, "/api/admin/corporate-actions",
                                                 body: #"{"symbol":"MSFT","kind":"split","exDate":"2021-04-10","ratio":"2"}"#, token: player)
            #expect(notAdmin.status == .forbidden)
            #expect(try await client.decode(CorporateActionListBody.self, "/api/stock/MSFT/corporate-actions", token: player).items.isEmpty)

            let split = #"{"symbol":"msft","kind":"split","exDate":"2021-04-10","ratio":"2"}"#
            let created = try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin)
            #expect(created.status == .created)
            let action = try JSONDecoder().decode(CorporateActionBody.self, from: Data(buffer: created.body))
            #expect(action.symbol == "MSFT" && action.ratio == "2" && action.amount == nil && action.source == "admin")
            #expect(try await client.send(.post, "/api/admin/corporate-actions", body: split, token: admin).status == .conflict)

            // Before the split, one old share is two of today's: the chart halves those closes.
            let after = try await client.decode(AdjustedChartBody.self, "/api/stock/MSFT/chart?range=1m", token: player)
            #expect(after.points.filter { $0.date < "2021-04-10" }.allSatisfy { $0.close == "125.00" })
            #expect(after.points.filter { $0.date >= "2021-04-10" }.allSatisfy { $0.close == "250.00" })
        }
    }

    @Test("loading prices with dividend and split columns records each action once, however often the file is loaded")
    func actionsFromPrices() async throws {
        try await TestApp.run { client in
            let admin = try await client.seedMarket()
            let csv = "symbol,date,open,high,low,close,volume,dividend,split\r\n"
                + "AAL,2021-04-22,10,10,10,10,100,0.25,1\r\nAAL,2021-04-23,10,10,10,5,100,0,2\r\n"
            for _ in 0..<2 {
                let response = try await client.send(.post, "/api/admin/prices", body: csv, contentType: "text/csv", token: admin)
                #expect(response.status == .ok)
            }
            let actions = try await client.decode(CorporateActionListBody.self, "/api/stock/AAL/corporate-actions", token: admin).items
            #expect(actions.map(\.kind) == ["split", "dividend"])
            #expect(actions.map(\.exDate) == ["2021-04-23", "2021-04-22"])
            #expect(actions.first?.ratio == "2" && actions.last?.amount == "0.25")
        }
    }
}
