import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Postgres
import Testing
import TestSupport

struct QuoteBody: Decodable, Equatable {
    let symbol: String
    let name: String
    let price: String
    let previousClose: String
    let change: String
    let changePercent: String
    let asOf: String
}

struct QuotePageBody: Decodable {
    let items: [QuoteBody]
    let total: Int
}

extension TestClientProtocol {
    func adminToken() async throws -> String {
        let response = try await login(TestApp.adminUsername, password: TestApp.adminPassword)
        return try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body)).token
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, body: String, contentType: String = "application/json",
              token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: body))
    }

    func decode<T: Decodable>(_ type: T.Type, _ uri: String, token: String) async throws -> T {
        let response = try await get(uri, token: token)
        #expect(response.status == .ok, "\(uri)")
        return try JSONDecoder().decode(T.self, from: Data(buffer: response.body))
    }

    /// Seeds four instruments and their history; returns the admin's token.
    func seedMarket() async throws -> String {
        let token = try await adminToken()
        let instruments = """
            [{"symbol":"aapl","name":"Apple Inc.","sector":"Information Technology","description":"Phones."},
             {"symbol":"AAL","name":"American Airlines Group","sector":"Industrials"},
             {"symbol":"MSFT","name":"Microsoft Corporation","sector":"Information Technology"},
             {"symbol":"ZZZ","name":"Sleepy Holdings","currency":"eur"}]
            """
        let put = try await send(.put, "/api/admin/instruments", body: instruments, token: token)
        #expect(put.status == .ok)
        let prices = try await send(.post, "/api/admin/prices", body: MarketFixture.csv, contentType: "text/csv", token: token)
        #expect(prices.status == .ok, "\(String(buffer: prices.body))")
        return token
    }
}

/// Two years of synthetic daily bars ending 2021-04-21: AAPL rises, AAL falls, MSFT is
/// flat, ZZZ has no history.
enum MarketFixture {
    static let lastDay = "2021-04-21"

    static var days: [String] {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let end = formatter.date(from: lastDay)!
        return (0..<730).reversed().map { formatter.string(from: end.addingTimeInterval(Double(-$0) * 86400)) }
    }

    /// AAPL closes 100 + i/10 on day i; AAL 80 − i/20; MSFT always 250.
    static var csv: String {
        var lines = ["symbol,date,open,high,low,close,adjusted_close,volume,dividend,split"]
        for (index, day) in days.enumerated() {
            let apple = Decimal(100) + Decimal(index) / 10
            let airline = Decimal(80) - Decimal(index) / 20
            lines.append("aapl,\(day),\(apple),\(apple + 1),\(apple - 1),\(apple),\(apple),1000,0.0,1.0")
            lines.append("AAL,\(day),\(airline),\(airline + 1),\(airline - 1),\(airline),\(airline),2000,0.0,1.0")
            lines.append("MSFT,\(day),250,251,249,250,250,3000,0.0,1.0")
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

@Suite("Market data")
struct MarketTests {
    @Test("seeding instruments and prices needs an admin")
    func seedingIsAdminOnly() async throws {
        try await TestApp.run { client in
            let player = try await client.register("player_one").token
            let put = try await client.send(.put, "/api/admin/instruments", body: #"[{"symbol":"X","name":"X"}]"#, token: player)
            #expect(put.status == .forbidden)
            #expect(try decodeProblem(put).code == "forbidden")
            let prices = try await client.send(.post, "/api/admin/prices", body: "symbol,date,close\n", contentType: "text/csv", token: player)
            #expect(prices.status == .forbidden)
            let quotes = try await client.send(.post, "/api/admin/quotes", body: "[]", token: nil)
            #expect(quotes.status == .unauthorized)
        }
    }

    @Test("prices load by COPY, symbols are upper-cased, and loading the same file twice changes nothing")
    func loadPricesIdempotently() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let again = try await client.send(.post, "/api/admin/prices", body: MarketFixture.csv, contentType: "text/csv", token: token)
            #expect(String(buffer: again.body) == #"{"rows":2190}"#)
            let chart = try await client.decode(ChartBody.self, "/api/stock/aapl/chart?range=5y", token: token)
            #expect(chart.points.count == 730)
            #expect(chart.symbol == "AAPL")
        }
    }

    @Test("a bad price file is refused with its line number and stores nothing", arguments: [
        ("symbol,date,open,high,low,volume\nAAPL,2021-04-22,1,1,1,10\n", 1, "close"),
        ("symbol,date,close\nAAPL,2021-04-22,10\nAAPL,2021-04-23,ten\n", 3, "number"),
        ("symbol,date,close\nAAPL,2021-04-22,-10\n", 2, "greater than zero"),
        ("symbol,date,close\nAAPL,22/04/2021,10\n", 2, "YYYY-MM-DD"),
        ("symbol,date,close\nAAPL,2021-02-30,10\n", 2, "YYYY-MM-DD"),
        ("symbol,date,close\nAAPL,2021-04-22,10\nNOPE,2021-04-22,10\n", 3, "unknown symbol"),
        ("symbol,date,close\nAAPL,2021-04-22,10\nAAPL,2021-04-22,11\n", 3, "twice"),
        ("symbol,date,close\nAAPL,2021-04-22\n", 2, "fields"),
        ("symbol,date,close,volume\nAAPL,2021-04-22,10,1.5\n", 2, "volume"),
    ])
    func badPriceFiles(_ upload: (csv: String, line: Int, words: String)) async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let response = try await client.send(.post, "/api/admin/prices", body: upload.csv, contentType: "text/csv", token: token)
            #expect(response.status == .unprocessableContent)
            let problem = try JSONDecoder().decode(LineProblem.self, from: Data(buffer: response.body))
            #expect(problem.code == "validation_failed")
            #expect(problem.line == upload.line)
            #expect(problem.detail.contains(upload.words), "\(problem.detail)")
            let chart = try await client.decode(ChartBody.self, "/api/stock/AAPL/chart?range=1m", token: token)
            #expect(chart.points.last?.date == MarketFixture.lastDay)
        }
    }

    @Test("instruments upload as the seed command's CSV; a bad record is refused by the line an editor shows and nothing is stored")
    func instrumentCSVUpload() async throws {
        try await TestApp.run { client in
            let token = try await client.adminToken()
            let bad = "symbol,name,description\nAAA,\"A, Inc.\",\"Makes\nthings\"\nNO/SLASH,Slash Corp,x\n"
            let refused = try await client.send(.put, "/api/admin/instruments", body: bad, contentType: "text/csv", token: token)
            #expect(refused.status == .unprocessableContent)
            let problem = try JSONDecoder().decode(LineProblem.self, from: Data(buffer: refused.body))
            #expect(problem.code == "validation_failed")
            #expect(problem.line == 4)
            #expect(problem.detail.hasPrefix("Line 4: symbol must be"), "\(problem.detail)")
            let none = try await client.send(.get, "/api/stock/AAA", body: "", token: token)
            #expect(none.status == .notFound)

            let good = "symbol,name,description,currency\nAAA,\"A, Inc.\",\"Makes \"\"things\"\"\",eur\nBBB,B Inc.,,\n"
            let saved = try await client.send(.put, "/api/admin/instruments", body: good, contentType: "text/csv", token: token)
            #expect(saved.status == .ok)
            #expect(String(buffer: saved.body) == #"{"upserted":2}"#)
        }
    }

    @Test("an empty upload is 422")
    func emptyUpload() async throws {
        try await TestApp.run { client in
            let token = try await client.adminToken()
            for body in ["", "symbol,date,close\n"] {
                let response = try await client.send(.post, "/api/admin/prices", body: body, contentType: "text/csv", token: token)
                #expect(response.status == .unprocessableContent)
            }
        }
    }

    @Test("mockstock seed names a bad instrument row by the line an editor shows, even after a quoted field spanning lines, and stores nothing", arguments: [
        ("symbol,name,description\nAAA,\"A, Inc.\",\"Makes\nthings\"\n\nNO/SLASH,Slash Corp,x\n", 5, "symbol must be"),
        ("symbol,name,description\r\nAAA,A Inc.,\"two\r\nlines\"\r\nBBB,B Inc.\r\n", 4, "expected 3 fields, found 2"),
        ("symbol,name\nAAA,A Inc.\nBBB,B Inc.\naaa,Again Inc.\n", 4, "AAA already appears on line 2"),
        ("ticker,title\nAAA,A Inc.\n", 1, "the header needs symbol and name"),
    ])
    func seedInstrumentLines(csv: String, line: Int, detail: String) async throws {
        try await withSeeder { _, pool, seeder in
            do {
                _ = try await seeder.seedInstruments(csv: csv)
                Issue.record("\(csv.debugDescription) was accepted")
            } catch let error as InvalidInput {
                #expect(error.line == line)
                #expect(error.detail.hasPrefix("Line \(line): "))
                #expect(error.detail.contains(detail), "\(error.detail)")
            }
            #expect(try await seeder.isEmpty())
        }
    }

    /// A migrated database without a market, a pool on it and the seeder `mockstock seed` uses.
    private func withSeeder(_ body: (TemporaryDatabase, PostgresConnectionPool, MarketSeeder) async throws -> Void) async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            try await database.withPool { pool in try await body(database, pool, MarketSeeder(pool: pool)) }
        }
    }

    @Test("mockstock seed reads quoted fields, the S&P list's columns and an explicit currency")
    func seedInstrumentFile() async throws {
        try await withSeeder { _, pool, seeder in
            let csv = "symbol,name,description,currency\nAAA,\"A, Inc.\",\"Makes \"\"things\"\"\nand more.\",eur\n\n"
            #expect(try await seeder.seedInstruments(csv: csv) == 1)
            let sp = "Symbol,Security,GICS Sector,GICS Sub-Industry,Headquarters Location,Founded\nBBB,B Corp,Energy,Oil & Gas,\"Houston, Texas\",1901\n"
            #expect(try await seeder.seedInstruments(csv: sp) == 1)
            let rows = try await pool.query(
                "SELECT symbol, name, description, sector, currency FROM instruments ORDER BY symbol"
            ).decode((String, String, String, String, String).self)
            #expect(rows.map(\.0) == ["AAA", "BBB"])
            #expect(rows[0].1 == "A, Inc." && rows[0].2 == "Makes \"things\"\nand more." && rows[0].4 == "EUR")
            #expect(rows[1].2 == "Oil & Gas. Headquartered in Houston, Texas. Founded 1901." && rows[1].3 == "Energy" && rows[1].4 == "USD")
        }
    }

    @Test("seeding with recent dates moves every trading day, in order, onto the trading days before today, splits and dividends with them; the clock names the span")
    func seedRecent() async throws {
        try await withSeeder { database, pool, seeder in
            _ = try await seeder.seedInstruments(csv: "symbol,name\nAAA,A Inc.\nBBB,B Inc.\n")
            // Four real trading days of 2018 (a Friday, then Monday to Wednesday); BBB trades
            // on two of them only, AAA pays a dividend on Monday and splits 2-for-1 on Wednesday.
            let csv = """
                symbol,date,close,volume,dividend,split
                AAA,2018-04-20,10,1,0,1
                AAA,2018-04-23,11,1,0.5,1
                AAA,2018-04-24,12,1,0,1
                AAA,2018-04-25,6.5,1,0,2
                BBB,2018-04-20,50,1,0,1
                BBB,2018-04-25,51,1,0,1

                """
            // Before Monday 2026-11-30: Thanksgiving (Thursday 26th) is no trading day.
            let chunks = AsyncStream<ByteBuffer> { $0.yield(ByteBuffer(string: csv)); $0.finish() }
            #expect(try await seeder.seedPrices(chunks, endingBefore: "2026-11-30") == 6)
            let bars = try await pool.query(
                "SELECT symbol, to_char(day, 'YYYY-MM-DD'), close::text FROM daily_bars ORDER BY symbol, day"
            ).decode((String, String, String).self)
            #expect(bars.map { "\($0.0) \($0.1) \($0.2)" } == [
                "AAA 2026-11-23 10", "AAA 2026-11-24 11", "AAA 2026-11-25 12", "AAA 2026-11-27 6.5",
                "BBB 2026-11-23 50", "BBB 2026-11-27 51",
            ])
            let actions = try await pool.query(
                "SELECT kind, to_char(ex_date, 'YYYY-MM-DD') FROM corporate_actions ORDER BY ex_date"
            ).decode((String, String).self)
            #expect(actions.map { "\($0.0) \($0.1)" } == ["dividend 2026-11-24", "split 2026-11-27"])
            try await TestApp.run(on: database) { client in
                let token = try await client.register("span_reader").token
                struct Clock: Decodable { struct Span: Decodable { let from: String; let through: String }; let history: Span? }
                let clock = try await client.decode(Clock.self, "/api/market/clock", token: token)
                #expect(clock.history?.from == "2026-11-23" && clock.history?.through == "2026-11-27")
            }
        }
    }

    @Test("the marketplace searches ticker prefixes and name words, case-insensitively")
    func search() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            func symbols(_ query: String) async throws -> [String] {
                try await client.decode(QuotePageBody.self, "/api/stock/market?search=\(query)", token: token).items.map(\.symbol)
            }
            #expect(try await symbols("aa") == ["AAL", "AAPL"])
            #expect(try await symbols("APPLE") == ["AAPL"])
            #expect(try await symbols("airl") == ["AAL"])
            #expect(try await symbols("corp") == ["MSFT"])
            #expect(try await symbols("pple") == [])
            #expect(try await symbols("%25") == [])
            #expect(try await symbols("") == ["AAL", "AAPL", "MSFT"])
        }
    }

    @Test("the marketplace sorts by symbol, price and change, and paginates with a total")
    func sortAndPaginate() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            func page(_ query: String) async throws -> QuotePageBody {
                try await client.decode(QuotePageBody.self, "/api/stock/market?\(query)", token: token)
            }
            #expect(try await page("sort=-symbol").items.map(\.symbol) == ["MSFT", "AAPL", "AAL"])
            #expect(try await page("sort=price").items.map(\.symbol) == ["AAL", "AAPL", "MSFT"])
            #expect(try await page("sort=-price").items.map(\.symbol) == ["MSFT", "AAPL", "AAL"])
            #expect(try await page("sort=-change").items.map(\.symbol) == ["AAPL", "MSFT", "AAL"])
            #expect(try await page("sort=change").items.map(\.symbol) == ["AAL", "MSFT", "AAPL"])
            let second = try await page("limit=2&offset=2")
            #expect(second.items.map(\.symbol) == ["MSFT"])
            #expect(second.total == 3)
            let beyond = try await page("offset=10")
            #expect(beyond.items.isEmpty && beyond.total == 3)
            #expect(try await page("limit=100000").items.count == 3)
            for bad in ["sort=name", "limit=0", "limit=-1", "limit=ten", "offset=-1"] {
                let response = try await client.get("/api/stock/market?\(bad)", token: token)
                #expect(response.status == .unprocessableContent, "\(bad)")
            }
        }
    }

    @Test("quotes carry exact decimal strings: price, previous close, change and percent")
    func quoteArithmetic() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let quotes = try await client.decode([QuoteBody].self, "/api/stock/symbols?symbols=aapl,NOPE,AAL,AAPL", token: token)
            #expect(quotes.map(\.symbol) == ["AAPL", "AAL"])
            // AAPL's last two closes are 172.9 and 172.8.
            #expect(quotes[0].price == "172.90")
            #expect(quotes[0].previousClose == "172.80")
            #expect(quotes[0].change == "0.10")
            #expect(quotes[0].changePercent == "0.06")
            #expect(quotes[0].name == "Apple Inc.")
            #expect(try await client.decode([QuoteBody].self, "/api/stock/symbols?symbols=", token: token).isEmpty)
        }
    }

    @Test("movers: winners rose today, losers fell, biggest first")
    func movers() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let movers = try await client.decode(MoversBody.self, "/api/stock/movers?limit=5", token: token)
            #expect(movers.winners.map(\.symbol) == ["AAPL"])
            #expect(movers.losers.map(\.symbol) == ["AAL"])
        }
    }

    @Test("the stock page has the day change, one-year change and 52-week range")
    func detail() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let detail = try await client.decode(DetailBody.self, "/api/stock/aapl", token: token)
            #expect(detail.symbol == "AAPL")
            #expect(detail.description == "Phones.")
            #expect(detail.sector == "Information Technology")
            #expect(detail.currency == "USD")
            // A year before the last day (index 729) is index 364: close 136.4.
            #expect(detail.yearChangePercent == "26.76")
            #expect(detail.yearHigh == "173.90")
            // The 52 weeks before the last day start at index 366: lows from 135.6.
            #expect(detail.yearLow == "135.60")

            for unknown in ["NOPE", "not%20a%20symbol"] {
                let response = try await client.get("/api/stock/\(unknown)", token: token)
                #expect(response.status == .notFound)
                #expect(try decodeProblem(response).code == "unknown_symbol")
            }
        }
    }

    @Test("an instrument without any price is not quoted: 503 quote_unavailable on its page")
    func noPrice() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let response = try await client.get("/api/stock/ZZZ", token: token)
            #expect(response.status == .serviceUnavailable)
            #expect(try decodeProblem(response).code == "quote_unavailable")
            let quotes = try await client.decode([QuoteBody].self, "/api/stock/symbols?symbols=ZZZ", token: token)
            #expect(quotes.isEmpty)
        }
    }

    @Test("charts cover 1m, 3m, 6m, 1y and 5y, oldest first; other ranges are 422")
    func charts() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let expected = ["1m": 31, "3m": 92, "6m": 183, "1y": 366, "5y": 730]
            for (range, count) in expected {
                let chart = try await client.decode(ChartBody.self, "/api/stock/MSFT/chart?range=\(range)", token: token)
                #expect(chart.points.count == count, "\(range)")
                #expect(chart.points.map(\.date) == chart.points.map(\.date).sorted())
                #expect(chart.points.last?.close == "250.00")
                #expect(chart.points.last?.volume == 3000)
            }
            #expect(try await client.get("/api/stock/MSFT/chart?range=2w", token: token).status == .unprocessableContent)
            #expect(try await client.get("/api/stock/NOPE/chart?range=1m", token: token).status == .notFound)
        }
    }

    @Test("admin quotes set the price; the previous close is the last close before; unknown symbols store nothing")
    func adminQuotes() async throws {
        try await TestApp.run { client in
            let token = try await client.seedMarket()
            let set = try await client.send(
                .post, "/api/admin/quotes", body: #"[{"symbol":"msft","price":"262.5"},{"symbol":"AAPL","price":180}]"#, token: token
            )
            #expect(String(buffer: set.body) == #"{"accepted":2}"#)
            let quotes = try await client.decode([QuoteBody].self, "/api/stock/symbols?symbols=MSFT,AAPL", token: token)
            #expect(quotes.map(\.price) == ["262.50", "180.00"])
            #expect(quotes.map(\.previousClose) == ["250.00", "172.90"])
            #expect(quotes[0].changePercent == "5.00")

            let unknown = try await client.send(
                .post, "/api/admin/quotes", body: #"[{"symbol":"MSFT","price":"1"},{"symbol":"NOPE","price":"2"}]"#, token: token
            )
            #expect(unknown.status == .notFound)
            #expect(try decodeProblem(unknown).code == "unknown_symbol")
            for bad in [#"[{"symbol":"MSFT","price":"0"}]"#, #"[{"symbol":"MSFT","price":"-3"}]"#,
                        #"[{"symbol":"MSFT","price":"1e3"}]"#, #"[{"symbol":"MSFT"}]"#] {
                let response = try await client.send(.post, "/api/admin/quotes", body: bad, token: token)
                #expect(response.status == .unprocessableContent, "\(bad)")
            }
            let after = try await client.decode([QuoteBody].self, "/api/stock/symbols?symbols=MSFT", token: token)
            #expect(after[0].price == "262.50")
        }
    }

    @Test("the price set is the price used: once POST /api/admin/quotes has answered, a buy at once fills at it, 20 times in 20, however long quotes are cached")
    func storedPriceIsUsedAtOnce() async throws {
        try await TestApp.run(live: true, configure: { $0.quoteCacheLifetime = .seconds(60) }) { client in
            try await client.seedTradingMarket()
            let admin = try await client.adminToken()
            let player = try await client.register("prompt").token
            var fills: [String] = []
            for round in 0..<20 {
                let price = round.isMultiple(of: 2) ? "120.00" : "100.00"
                // The quote read now is cached for a minute...
                _ = try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: player)
                let set = try await client.send(.post, "/api/admin/quotes", body: #"[{"symbol":"AAPL","price":"\#(price)"}]"#, token: admin)
                #expect(set.status == .ok)
                // ...and the next trade and quote read, right after the answer, use the new price.
                fills.append(try await client.tradeOK("buy", "AAPL", 1, token: player).trade.price)
                #expect(try await client.decode(StockDetailBody.self, "/api/stock/AAPL", token: player).price == price)
            }
            #expect(fills == (0..<20).map { $0.isMultiple(of: 2) ? "120.00" : "100.00" })
        }
    }
}

struct LineProblem: Decodable {
    let code: String
    let detail: String
    let line: Int?
}

struct ChartBody: Decodable {
    struct Point: Decodable {
        let date: String
        let open: String?
        let high: String?
        let low: String?
        let close: String
        let volume: Int
    }

    let symbol: String
    let range: String
    let points: [Point]
}

struct MoversBody: Decodable {
    let winners: [QuoteBody]
    let losers: [QuoteBody]
}

struct DetailBody: Decodable {
    let symbol: String
    let name: String
    let price: String
    let description: String
    let sector: String
    let currency: String
    let yearChangePercent: String?
    let yearHigh: String?
    let yearLow: String?
}
