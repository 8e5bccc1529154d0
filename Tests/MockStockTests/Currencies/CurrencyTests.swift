import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

@Suite("Currencies")
struct CurrencyTests {
    /// The ECB's rates of 2020-02-27 .. 2020-03-02 as its file gives them (newest first).
    static let ecb = """
        Date,USD,JPY,GBP,CYP,
        2020-03-02,1.1122,119.82,0.87113,N/A,
        2020-02-28,1.0977,118.9,0.85405,N/A,
        2020-02-27,1.0964,121.64,0.84818,N/A,

        """

    struct Conversion: Decodable, Equatable {
        let from: String
        let to: String
        let amount: String
        let rate: String
        let result: String
        let date: String
    }

    /// Stores the rates of a file straight into a database.
    static func store(_ csv: String, in pool: PostgresConnectionPool) async throws -> Int {
        try await FxStore(pool: pool).store(try FxStore.parse(csv))
    }

    static func load(_ client: some TestClientProtocol, _ csv: String = ecb) async throws -> TestResponse {
        try await client.send(.post, "/api/admin/fx", body: csv, contentType: "text/csv", token: try await client.adminToken())
    }

    @Test("a currency whose last reference rate is over a month older than the newest is no longer published: said apart, its day given")
    func discontinued() async throws {
        try await TestApp.run { client in
            let csv = """
                Date,USD,SKK,HRK,
                2023-01-27,1.0856,N/A,N/A,
                2022-12-30,1.0666,N/A,7.5365,
                2008-12-31,1.3917,30.126,7.3555,

                """
            #expect(try await Self.load(client, csv).status == .ok)
            let token = try await client.register("collector").token
            struct Rates: Decodable { let rates: [String: String]; let asOf: String?; let discontinued: [String: String] }
            let now = try await client.decode(Rates.self, "/api/fx/rates", token: token)
            #expect(now.discontinued == ["SKK": "2008-12-31"], "\(now)")
            #expect(now.rates["SKK"] == "30.126000" && now.rates["HRK"] == "7.536500", "\(now)")
            // On a past day, only what had stopped by then.
            let then = try await client.decode(Rates.self, "/api/fx/rates?date=2009-01-02", token: token)
            #expect(then.discontinued.isEmpty)
        }
    }

    @Test("conversions at the ECB's rate of the day, cross rates through the euro, the last rates before a weekend")
    func conversions() async throws {
        try await TestApp.run { client in
            let loaded = try await Self.load(client)
            #expect(loaded.status == .ok, "\(String(buffer: loaded.body))")
            let token = try await client.register("traveller").token
            func convert(_ query: String) async throws -> Conversion {
                try await client.decode(Conversion.self, "/api/fx/convert?\(query)", token: token)
            }
            #expect(try await convert("from=EUR&to=USD&amount=100&date=2020-03-02")
                == Conversion(from: "EUR", to: "USD", amount: "100.00", rate: "1.112200", result: "111.22", date: "2020-03-02"))
            // Without a date, the rate now: here the latest reference rate, as published.
            struct Now: Decodable { let rate: String; let result: String; let date: String; let asOf: String? }
            let now = try await client.decode(Now.self, "/api/fx/convert?from=EUR&to=USD&amount=10", token: token)
            #expect(now.rate == "1.112200" && now.result == "11.12" && now.asOf == "2020-03-02T15:00:00Z", "\(now)")
            // JPY per USD = JPY per EUR / USD per EUR = 119.82 / 1.1122.
            let cross = try await convert("from=usd&to=jpy&amount=250.50&date=2020-03-02")
            #expect(cross.rate == "107.732422" && cross.result == "26986.97")
            // Sunday 2020-03-01: Friday's rates.
            let weekend = try await convert("from=GBP&to=EUR&amount=1000&date=2020-03-01")
            #expect(weekend.date == "2020-02-28" && weekend.result == "1170.89")

            struct Rates: Decodable { let base: String; let date: String; let rates: [String: String] }
            let rates = try await client.decode(Rates.self, "/api/fx/rates?base=USD&date=2020-02-28", token: token)
            #expect(rates.base == "USD" && rates.date == "2020-02-28" && rates.rates.keys.sorted() == ["EUR", "GBP", "JPY"])
            #expect(rates.rates["EUR"] == "0.910996")

            struct Chart: Decodable { struct Point: Decodable, Equatable { let date: String; let rate: String }; let pair: String; let points: [Point] }
            let chart = try await client.decode(Chart.self, "/api/fx/EURUSD/chart?range=max", token: token)
            #expect(chart.pair == "EURUSD" && chart.points.map(\.rate) == ["1.096400", "1.097700", "1.112200"])

            // Before the first rate, or a currency the ECB never published (CYP here): 404.
            for query in ["from=EUR&to=USD&amount=1&date=2020-01-01", "from=EUR&to=CYP&amount=1&date=2020-03-02", "from=XXX&to=USD&amount=1"] {
                let response = try await client.get("/api/fx/convert?\(query)", token: token)
                #expect(try response.status == .notFound && decodeProblem(response).code == "unknown_currency", "\(query)")
            }
            for query in ["from=EURO&to=USD&amount=1", "from=EUR&to=USD&amount=1e5", "from=EUR&to=USD", "from=EUR&to=USD&amount=1&date=2020-02-30"] {
                #expect(try await client.get("/api/fx/convert?\(query)", token: token).status == .unprocessableContent, "\(query)")
            }
        }
    }

    @Test("an upload is all or nothing, and its errors name their line; players may not upload")
    func uploads() async throws {
        try await TestApp.run { client in
            for (csv, line) in [
                ("Date,USD\n2020-03-02,1.1\n2020-03-03,abc\n", 3), ("Day,USD\n2020-03-02,1.1\n", 1),
                ("Date,EUR\n2020-03-02,1\n", 1), ("Date,USD\n2020-3-2,1.1\n", 2), ("Date,USD\n2020-03-02,1.1,2\n", 2),
                ("Date,USD\n2020-03-02,-1\n", 2),
            ] {
                let response = try await Self.load(client, csv)
                #expect(response.status == .unprocessableContent, "\(csv)")
                #expect(try decodeProblem(response).detail.hasPrefix("line \(line):"), "\(csv)")
            }
            let token = try await client.register("forger").token
            #expect(try await client.get("/api/fx/convert?from=EUR&to=USD&amount=1", token: token).status == .notFound)
            let player = try await client.send(.post, "/api/admin/fx", body: Self.ecb, contentType: "text/csv", token: token)
            #expect(player.status == .forbidden)
            // Loading the same file twice stores the same rates.
            _ = try await Self.load(client)
            _ = try await Self.load(client)
            #expect(try await client.get("/api/fx/convert?from=EUR&to=USD&amount=1&date=2020-03-02", token: token).status == .ok)
        }
    }
}
