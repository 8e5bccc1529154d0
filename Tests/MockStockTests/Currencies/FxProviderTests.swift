import Foundation
import Logging
@testable import MockStock
import Postgres
import Testing
import TestSupport

@Suite("Exchange rates now")
struct FxProviderTests {
    /// The ECB publishes at 16:00 in Frankfurt: 15:00 UTC in winter.
    static func published(_ day: String) -> Date {
        ISO8601DateFormatter().date(from: "\(day)T15:00:00Z")!
    }

    @Test("the latest reference rates until the simulated market walks them; the replay day's rates when replaying")
    func storedSimulatedAndReplayed() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                _ = try await client.seedMarket()
                #expect(try await CurrencyTests.load(client).status == .ok)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let stored = StoredQuoteProvider(store: MarketStore(pool: pool), fx: FxStore(pool: pool))
            let latest = try #require(try await stored.fxRate(from: "EUR", to: "USD"))
            #expect(latest == FxQuote(rate: Decimal(string: "1.1122")!, asOf: Self.published("2020-03-02")))

            // A tick walks every currency a little way from its reference rate, to six decimals.
            var settings = SimulatedMarket.Settings()
            settings.seed = 7
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            #expect(try await SimulatedMarket(pool: pool, settings: settings, hours: MarketHours(schedule: .always), logger: Logger(label: "test")).tick(now: now))
            let rows = try await pool.query("SELECT currency, per_euro, source FROM fx_quotes").decode((String, Decimal, String).self)
            let walked = Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) })
            #expect(walked.keys.sorted() == ["GBP", "JPY", "USD"] && rows.allSatisfy { $0.2 == "simulated" })
            let usd = try #require(walked["USD"])
            #expect(usd != Decimal(string: "1.1122")! && abs(((usd - Decimal(string: "1.1122")!) / usd as NSDecimalNumber).doubleValue) < 0.01)
            #expect(usd == usd.rounded(6))
            // The provider serves the walked rates, crossed through the euro.
            let cross = try #require(try await stored.fxRate(from: "USD", to: "JPY"))
            #expect(cross == FxQuote(rate: walked["JPY"]! / usd, asOf: now))

            // Replaying from Friday 2020-02-28: that day's reference rates, not the walked ones.
            var replaySettings = ReplayMarket.Settings()
            replaySettings.startDay = "2020-02-28"
            let replay = ReplayMarket(pool: pool, settings: replaySettings, logger: Logger(label: "test"))
            let replayed = StoredQuoteProvider(store: MarketStore(pool: pool), fx: FxStore(pool: pool), replay: replay)
            let friday = try #require(try await replayed.fxRate(from: "GBP", to: "EUR"))
            #expect(friday.rate == 1 / Decimal(string: "0.85405")! && friday.asOf == Self.published("2020-02-28"))
            #expect(try await replayed.fxRate(from: "EUR", to: "CYP") == nil)
            await pool.close()
        }
    }
}
