import Foundation
import HummingbirdTesting
import Logging
@testable import MockStock
import Postgres
import Synchronization
import Testing
import TestSupport

@Suite("Quote providers")
struct MarketProviderTests {
    @Test("the random walk stays within sane bounds for a long time")
    func walkStaysBounded() {
        var price = Decimal(100)
        var lowest = price
        var highest = price
        for tick in 0..<20_000 {
            var random = SeededRandom(seed: 7, tick: Int64(tick), symbol: "VOLATILE")
            price = RandomWalk.step(price: price, anchor: 100, dailyVolatility: 0.05, minutes: 5, normal: random.nextNormal())
            lowest = min(lowest, price)
            highest = max(highest, price)
        }
        #expect(lowest > 25 && highest < 400, "range \(lowest)...\(highest)")
        #expect(highest > 110 && lowest < 90, "the walk should move: \(lowest)...\(highest)")
    }

    @Test("the same seed gives the same walk; another seed another")
    func walkIsReproducible() {
        func walk(seed: UInt64) -> [Decimal] {
            var price = Decimal(50)
            return (0..<200).map { tick in
                var random = SeededRandom(seed: seed, tick: Int64(tick), symbol: "AAPL")
                price = RandomWalk.step(price: price, anchor: 50, dailyVolatility: 0.02, minutes: 1, normal: random.nextNormal())
                return price
            }
        }
        #expect(walk(seed: 1) == walk(seed: 1))
        #expect(walk(seed: 1) != walk(seed: 2))
        #expect(walk(seed: 1).allSatisfy { $0 == $0.rounded(2) })
    }

    @Test("a simulated tick moves every price once, starting from the last real close; reruns of a tick do nothing")
    func simulatedTick() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in _ = try await client.seedMarket() }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            var settings = SimulatedMarket.Settings()
            settings.seed = 42
            let stored = StoredPricesLog()
            let market = SimulatedMarket(pool: pool, settings: settings, hours: MarketHours(schedule: .always), logger: Logger(label: "test"), pricesStored: stored.record)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            #expect(try await market.tick(now: start))
            #expect(try await !market.tick(now: start.addingTimeInterval(1)))
            // Orders are matched after the tick that moved prices (all symbols), not after the rerun.
            #expect(stored.calls == [nil])
            let first = try await quotes(pool)
            #expect(first.keys.sorted() == ["AAL", "AAPL", "MSFT"])
            #expect(first["AAPL"]?.previous == Decimal(string: "172.9"))
            #expect(first.values.allSatisfy { $0.source == "simulated" })
            #expect(abs(((first["AAPL"]!.price - 172.9) / 172.9 as NSDecimalNumber).doubleValue) < 0.05)

            // Another server process takes the next tick; prices move again.
            let other = SimulatedMarket(pool: pool, settings: settings, hours: MarketHours(schedule: .always), logger: Logger(label: "other"))
            #expect(try await other.tick(now: start.addingTimeInterval(5)))
            let second = try await quotes(pool)
            #expect(second != first)
            #expect(second["AAPL"]?.previous == first["AAPL"]?.previous)
            await pool.close()
        }
    }

    /// A simulated market (UTC days, always open, seeded walk) over the test market.
    private func withSimulatedMarket(
        seed: UInt64, _ body: (PostgresConnectionPool, SimulatedMarket) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in _ = try await client.seedMarket() }
            var settings = SimulatedMarket.Settings()
            settings.seed = seed
            try await database.withPool { pool in
                try await body(pool, SimulatedMarket(
                    pool: pool, settings: settings, hours: MarketHours(schedule: .always), logger: Logger(label: "test")
                ))
            }
        }
    }

    @Test("every simulated tick updates its minute's bar: open, high, low, close and the number of ticks")
    func simulatedMinuteBars() async throws {
        try await withSimulatedMarket(seed: 42) { pool, market in
            // A minute's start, a tick 30 s into it, and one in the next minute.
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            var prices: [Decimal] = []
            for offset in [0.0, 30, 70] {
                #expect(try await market.tick(now: start.addingTimeInterval(offset)))
                prices.append(try #require(try await quotes(pool)["AAPL"]?.price))
            }
            let bars = try await pool.query(
                "SELECT extract(epoch FROM minute)::int8, open, high, low, close, ticks FROM minute_bars WHERE symbol = 'AAPL' ORDER BY minute"
            ).decode((Int, Decimal, Decimal, Decimal, Decimal, Int).self)
            #expect(bars.count == 2)
            #expect(bars[0].0 == 1_800_000_000 && bars[0].1 == prices[0] && bars[0].4 == prices[1] && bars[0].5 == 2)
            #expect(bars[0].2 == max(prices[0], prices[1]) && bars[0].3 == min(prices[0], prices[1]))
            #expect(bars[1].0 == 1_800_000_060 && bars[1].1 == prices[2] && bars[1].4 == prices[2] && bars[1].5 == 1)
        }
    }

    @Test("a simulated day that ends becomes history: its close, open, high and low in the daily prices, once")
    func simulatedDayCloses() async throws {
        try await withSimulatedMarket(seed: 7) { pool, market in
            // Three ticks on Friday 2027-01-15 (days in UTC, the market always open), then one on Saturday.
            let friday = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z
            var prices: [Decimal] = []
            for offset in [0.0, 60, 120] {
                #expect(try await market.tick(now: friday.addingTimeInterval(offset)))
                prices.append(try #require(try await quotes(pool)["AAPL"]?.price))
            }
            let day = MarketHours(schedule: .always).day(of: friday)
            func bars() async throws -> [(String, Decimal?, Decimal?, Decimal?, Decimal)] {
                try await pool.query(
                    "SELECT to_char(day, 'YYYY-MM-DD'), open, high, low, close FROM daily_bars WHERE symbol = 'AAPL' AND day > '2021-04-21' ORDER BY day"
                ).decode((String, Decimal?, Decimal?, Decimal?, Decimal).self)
            }
            #expect(try await bars().isEmpty)
            #expect(try await market.tick(now: friday.addingTimeInterval(86_400)))
            let closed = try await bars()
            #expect(closed.count == 1)
            #expect(closed.first?.0 == day && closed.first?.4 == prices[2] && closed.first?.1 == prices[0])
            #expect(closed.first?.2 == prices.max() && closed.first?.3 == prices.min())
            // The day's close is the next day's previous close; a rerun adds nothing.
            #expect(try await quotes(pool)["AAPL"]?.previous == prices[2])
            #expect(try await !market.tick(now: friday.addingTimeInterval(86_401)))
            #expect(try await bars().count == 1)
        }
    }

    @Test("simulated prices are reproducible: the same seed and ticks give the same market")
    func simulatedReproducible() async throws {
        var markets: [[String: StoredQuote]] = []
        for _ in 0..<2 {
            try await TemporaryDatabase.with { database in
                try await TestApp.run(on: database) { client in _ = try await client.seedMarket() }
                let pool = PostgresConnectionPool(configuration: database.configuration)
                var settings = SimulatedMarket.Settings()
                settings.seed = 9
                let market = SimulatedMarket(pool: pool, settings: settings, hours: MarketHours(schedule: .always), logger: Logger(label: "test"))
                for step in 0..<5 {
                    try await market.tick(now: Date(timeIntervalSince1970: 1_800_000_000 + Double(step * 5)))
                }
                markets.append(try await quotes(pool).mapValues { StoredQuote(price: $0.price, previous: $0.previous, source: $0.source) })
                await pool.close()
            }
        }
        #expect(markets[0] == markets[1])
    }

    @Test("replay prices each stock at the historical close of the replay day and hides later history")
    func replay() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in _ = try await client.seedMarket() }
            let days = MarketFixture.days
            let pool = PostgresConnectionPool(configuration: database.configuration)
            var settings = ReplayMarket.Settings()
            settings.startDay = days[100]
            settings.tradingDaysPerMinute = 2
            let stored = StoredPricesLog()
            let replay = ReplayMarket(pool: pool, settings: settings, logger: Logger(label: "test"), pricesStored: stored.record)
            #expect(try await replay.day(at: Date()) == days[100])
            let startedAt = try await pool.query(
                "SELECT started_at FROM market_clock WHERE provider = 'replay'"
            ).decodeColumn(Date.self)[0]
            // 91 seconds at two days a minute: the fourth day of the replay.
            let now = startedAt.addingTimeInterval(91)
            #expect(try await replay.day(at: now) == days[103])
            try await replay.tick(now: now)
            try await replay.tick(now: now.addingTimeInterval(1))
            // A new replay day stores prices and matches orders once; the same day again does neither.
            #expect(stored.calls == [nil])
            let prices = try await quotes(pool)
            #expect(prices["AAPL"]?.price == Decimal(100) + Decimal(103) / 10)
            #expect(prices["AAPL"]?.previous == Decimal(100) + Decimal(102) / 10)
            #expect(prices["AAPL"]?.source == "replay")

            // A server replaying from the same start sees the same day and no later bars.
            try await TestApp.run(on: database, configure: {
                $0.quoteSource = .replay
                $0.replay = settings
            }) { client in
                let token = try await client.adminToken()
                let chart = try await client.decode(ChartBody.self, "/api/stock/AAPL/chart?range=1y", token: token)
                // The server's clock is now, a day or two into the replay: never past it.
                #expect(chart.points.last.map { $0.date <= days[101] } == true)
                #expect(chart.points.first.map { $0.date >= days[0] } == true)
            }
            await pool.close()
        }
    }

    @Test("the quote cache answers from memory within its lifetime and asks the source again after")
    func quoteCache() async throws {
        let source = CountingProvider()
        let clock = TestClock()
        let cache = CachingQuoteProvider(source, lifetime: .milliseconds(200), clock: clock.reader)
        _ = try await cache.quotes(for: ["AAPL", "MSFT"])
        clock.advance(by: .milliseconds(199))
        let again = try await cache.quotes(for: ["MSFT", "AAPL"])
        #expect(again["AAPL"]?.price == 1)
        #expect(await source.calls == [["AAPL", "MSFT"]])
        clock.advance(by: .milliseconds(1))
        _ = try await cache.quotes(for: ["AAPL"])
        #expect(await source.calls == [["AAPL", "MSFT"], ["AAPL"]])
        // Exchange rates alike: only the currency not yet read goes to the source.
        _ = try await cache.fxPerEuro(["USD"])
        #expect(try await cache.fxPerEuro(["USD", "JPY"])["JPY"]?.rate == 2)
        #expect(await source.fxCalls == [["USD"], ["JPY"]])
    }

    actor CountingProvider: QuoteProvider {
        private(set) var calls: [[String]] = []

        func quotes(for symbols: [String]) async throws -> [String: PriceQuote] {
            calls.append(symbols)
            return Dictionary(uniqueKeysWithValues: symbols.map {
                ($0, PriceQuote(symbol: $0, price: 1, previousClose: nil, asOf: Date()))
            })
        }

        nonisolated func historyEnd() async throws -> String? { nil }

        private(set) var fxCalls: [[String]] = []

        func fxPerEuro(_ currencies: [String]) async throws -> [String: FxQuote] {
            fxCalls.append(currencies)
            return Dictionary(uniqueKeysWithValues: currencies.map { ($0, FxQuote(rate: 2, asOf: Date())) })
        }
    }

    struct StoredQuote: Equatable, Sendable {
        let price: Decimal
        let previous: Decimal?
        let source: String
    }

    private func quotes(_ pool: PostgresConnectionPool) async throws -> [String: StoredQuote] {
        let rows = try await pool.query("SELECT symbol, price, previous_close, source FROM quotes")
        return Dictionary(uniqueKeysWithValues: try rows.decode((String, Decimal, Decimal?, String).self).map {
            ($0.0, StoredQuote(price: $0.1, previous: $0.2, source: $0.3))
        })
    }
}

/// Records what a market reports after storing prices (the symbols, nil for all).
final class StoredPricesLog: Sendable {
    private let log = Mutex<[[String]?]>([])

    var calls: [[String]?] { log.withLock { $0 } }

    var record: PricesStored {
        { symbols in self.log.withLock { $0.append(symbols) } }
    }
}
