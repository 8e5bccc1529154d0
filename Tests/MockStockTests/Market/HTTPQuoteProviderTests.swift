import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
@testable import MockStock
import Postgres
import Testing
import TestSupport

/// A fake quote API on loopback that records requests and can be told to stall or fail.
actor FakeUpstream {
    private(set) var requests: [String] = []
    var delay: Duration = .zero
    var failing = false
    var price = "187.25"

    func record(_ uri: String) { requests.append(uri) }
    func set(delay: Duration) { self.delay = delay }
    func set(failing: Bool) { self.failing = failing }
    func set(price: String) { self.price = price }

    func body(for symbols: [Substring]) -> String {
        "[" + symbols.map { #"{"symbol":"\#($0)","price":"\#(price)","previousClose":185,"asOf":"2030-01-01T00:00:00Z"}"# }
            .joined(separator: ",") + "]"
    }

    /// Runs `body` with the upstream listening; gives it the base URL.
    func serve(_ body: @Sendable @escaping (String) async throws -> Void) async throws {
        let router = Router()
        router.get("quotes") { request, _ in try await self.answer(request, symbols: request.uri.queryParameters.get("symbols") ?? "") }
        router.get("quote/{symbol}") { request, context in try await self.answer(request, symbols: context.parameters.get("symbol") ?? "") }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port!)")
        }
    }

    private func answer(_ request: Request, symbols: String) async throws -> Response {
        record(request.uri.description)
        if delay > .zero { try await Task.sleep(for: delay) }
        if failing { throw HTTPError(.internalServerError) }
        let text = body(for: symbols.split(separator: ","))
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

@Suite("HTTP quote provider")
struct HTTPQuoteProviderTests {
    /// A provider against the fake upstream, on a database that knows AAPL and MSFT.
    func withProvider(
        _ template: String = "/quotes?symbols={symbols}",
        configure: @Sendable @escaping (inout HTTPQuoteProvider.Settings) -> Void = { _ in },
        clock: TestClock = TestClock(),
        _ body: @Sendable @escaping (HTTPQuoteProvider, FakeUpstream, PostgresConnectionPool) async throws -> Void
    ) async throws {
        let upstream = FakeUpstream()
        try await upstream.serve { base in
            try await TemporaryDatabase.with { database in
                var configuration = TestApp.configuration(databaseURL: database.connectionString)
                configuration.adminUsername = nil
                try await database.withPool { pool in
                    try await migrate(pool: pool, configuration: configuration, logger: Logger(label: "test"))
                    _ = try await MarketAdminStore(pool: pool).upsert([
                        Instrument(symbol: "AAPL", name: "Apple Inc.", description: "", sector: "", currency: "USD"),
                        Instrument(symbol: "MSFT", name: "Microsoft", description: "", sector: "", currency: "USD"),
                    ])
                    var settings = HTTPQuoteProvider.Settings(urlTemplate: base + template)
                    settings.timeout = .milliseconds(300)
                    configure(&settings)
                    let provider = HTTPQuoteProvider(
                        settings: settings, store: MarketStore(pool: pool), fx: FxStore(pool: pool), logger: Logger(label: "test"), clock: clock.reader
                    )
                    try await body(provider, upstream, pool)
                }
            }
        }
    }

    @Test("symbols are batched into one request; unknown instruments are left out; quotes are kept")
    func batching() async throws {
        try await withProvider { provider, upstream, pool in
            let quotes = try await provider.quotes(for: ["AAPL", "MSFT", "NOPE"])
            #expect(quotes.keys.sorted() == ["AAPL", "MSFT"])
            #expect(quotes["AAPL"]?.price == Decimal(string: "187.25"))
            #expect(quotes["AAPL"]?.previousClose == 185)
            #expect(await upstream.requests == ["/quotes?symbols=AAPL,MSFT"])
            let stored = try await pool.query("SELECT count(*) FROM quotes WHERE source = 'http'").decodeColumn(Int.self)
            #expect(stored == [2])
        }
    }

    @Test("exchange rates are asked as pairs against the euro and kept; when the upstream fails, the last one, then the ECB's")
    func exchangeRates() async throws {
        let clock = TestClock()
        try await withProvider(configure: { $0.ttl = .seconds(15) }, clock: clock) { provider, upstream, pool in
            #expect(try await CurrencyTests.store(CurrencyTests.ecb, in: pool) > 0)
            await upstream.set(price: "1.25")
            #expect(try await provider.fxRate(from: "EUR", to: "USD")?.rate == Decimal(string: "1.25"))
            // Within its lifetime the rate is not asked again.
            #expect(try await provider.fxRate(from: "USD", to: "EUR")?.rate == 1 / Decimal(string: "1.25")!)
            #expect(await upstream.requests == ["/quotes?symbols=EURUSD"])
            let kept = try await pool.query("SELECT currency, per_euro::text, source FROM fx_quotes").decode((String, String, String).self)
            #expect(kept.map { "\($0.0) \($0.1) \($0.2)" } == ["USD 1.25 http"])

            // The upstream fails: the dollar is its last rate fetched (still fresh enough),
            // the yen, never fetched, the ECB's latest reference rate.
            await upstream.set(failing: true)
            clock.advance(by: .seconds(16))
            let yen = try #require(try await provider.fxRate(from: "USD", to: "JPY"))
            #expect(yen.rate == Decimal(string: "119.82")! / Decimal(string: "1.25")!)
            #expect(await upstream.requests == ["/quotes?symbols=EURUSD", "/quotes?symbols=EURJPY,EURUSD"])
        }
    }

    @Test("prices fetched from upstream fill the open orders they cross")
    func fetchedPricesMatchOrders() async throws {
        let upstream = FakeUpstream()
        try await upstream.serve { base in
            try await TestApp.run(configure: {
                $0.quoteSource = .http
                $0.http = HTTPQuoteProvider.Settings(urlTemplate: base + "/quotes?symbols={symbols}")
                $0.http.ttl = .milliseconds(10)
            }) { client in
                let admin = try await client.adminToken()
                let instruments = #"[{"symbol":"AAPL","name":"Apple Inc."}]"#
                #expect(try await client.send(.put, "/api/admin/instruments", body: instruments, token: admin).status == .ok)
                let token = try await client.register("fetcher").token
                let order = try await client.placeOrderOK(
                    #"{"symbol":"AAPL","side":"buy","quantity":2,"type":"limit","limitPrice":"180","timeInForce":"gtc"}"#, token: token)
                #expect(order.status == "new")
                await upstream.set(price: "179.5")
                try await Task.sleep(for: .milliseconds(20))
                // Any read of the quote fetches it; storing it matches the order.
                #expect(try await client.get("/api/stock/AAPL", token: token).status == .ok)
                try await client.waitForPriceFollowUps()
                let filled = try await client.order(order.id, token: token)
                #expect(filled.status == "filled" && filled.filledAveragePrice == "179.50")
            }
        }
    }

    @Test("a {symbol} template sends one request per symbol")
    func perSymbol() async throws {
        try await withProvider("/quote/{symbol}") { provider, upstream, _ in
            _ = try await provider.quotes(for: ["AAPL", "MSFT"])
            #expect(await upstream.requests.sorted() == ["/quote/AAPL", "/quote/MSFT"])
        }
    }

    @Test("answers are cached for the TTL, then fetched again")
    func ttl() async throws {
        let clock = TestClock()
        try await withProvider(configure: { $0.ttl = .milliseconds(300) }, clock: clock) { provider, upstream, _ in
            _ = try await provider.quotes(for: ["AAPL"])
            clock.advance(by: .milliseconds(299))
            _ = try await provider.quotes(for: ["AAPL"])
            #expect(await upstream.requests.count == 1)
            clock.advance(by: .milliseconds(1))
            _ = try await provider.quotes(for: ["AAPL"])
            #expect(await upstream.requests.count == 2)
        }
    }

    @Test("past the rate limit no request goes out and the last known quote serves")
    func rateLimit() async throws {
        try await withProvider(configure: {
            $0.ttl = .zero
            $0.rateLimit = 2
            $0.rateInterval = .seconds(60)
        }) { provider, upstream, _ in
            for _ in 0..<5 {
                let quotes = try await provider.quotes(for: ["AAPL"])
                #expect(quotes["AAPL"]?.price == Decimal(string: "187.25"))
            }
            #expect(await upstream.requests.count == 2)
        }
    }

    @Test("a slow upstream is cut off at the timeout; the last known quote serves, else 503")
    func timeout() async throws {
        try await withProvider(configure: { $0.ttl = .zero }) { provider, upstream, _ in
            await upstream.set(delay: .seconds(2))
            let started = ContinuousClock.now
            let thrown = try await #require(throws: MarketError.self) { try await provider.quotes(for: ["AAPL"]) }
            let error = AppError.problem(for: thrown, logger: Logger(label: "test"))
            #expect(error.code == "quote_unavailable")
            #expect(ContinuousClock.now - started < .seconds(1))

            await upstream.set(delay: .zero)
            _ = try await provider.quotes(for: ["AAPL"])
            await upstream.set(delay: .seconds(2))
            let fallback = try await provider.quotes(for: ["AAPL"])
            #expect(fallback["AAPL"]?.price == Decimal(string: "187.25"))
        }
    }

    @Test("a last known quote older than the staleness limit is refused with 503")
    func staleness() async throws {
        try await withProvider(configure: {
            $0.ttl = .zero
            $0.maxStaleness = .seconds(1)
        }) { provider, upstream, pool in
            _ = try await provider.quotes(for: ["MSFT"])
            await upstream.set(failing: true)
            #expect(try await provider.quotes(for: ["MSFT"])["MSFT"] != nil)
            try await pool.query("UPDATE quotes SET as_of = now() - interval '2 seconds'")
            let thrown = try await #require(throws: MarketError.self) { try await provider.quotes(for: ["MSFT"]) }
            let error = AppError.problem(for: thrown, logger: Logger(label: "test"))
            #expect(error.code == "quote_unavailable")
            #expect(error.status == .serviceUnavailable)
        }
    }
}
