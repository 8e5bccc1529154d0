import Foundation
import Hummingbird
import Postgres
import HummingbirdTesting
@testable import MockStock
import Testing
import TestSupport

struct LeagueMarketBody: Decodable, Equatable {
    struct Instrument: Decodable, Equatable {
        let symbol: String
        let name: String
        let price: String?
        let firstPrice: String?
        let changePercent: String?
        let realSymbol: String?
        let realName: String?
    }

    let kind: String
    let day: Int
    let days: Int
    let blind: Bool
    let ended: Bool
    let from: String?
    let to: String?
    let dayMinutes: Int?
    let nextDayAt: String?
    let marketReturnPercent: String
    let symbols: [Instrument]
    struct Against: Decodable, Equatable {
        let rank: Int
        let username: String?
        let returnPercent: String
        let differencePercent: String
    }
    let againstMarket: [Against]

    func price(_ symbol: String) -> String? { symbols.first { $0.symbol == symbol }?.price }
}

struct ScenarioEventBody: Decodable, Equatable {
    let id: Int
    let day: Int
    let symbols: [String]?
    let changePercent: String
    let headline: String
    let body: String?
    let applied: Bool
}

struct MadeBody: Decodable { let id: Int }

/// Two real instruments over five trading days of February 2020: CRSH falls by 60 %, BOOM
/// rises by 30 %.
enum ScenarioFixture {
    static let days = ["2020-02-18", "2020-02-19", "2020-02-20", "2020-02-21", "2020-02-24"]
    static let crash = ["50", "40", "30", "35", "20"]
    static let boom = ["10", "11", "12", "12", "13"]

    static var csv: String {
        var lines = ["symbol,date,open,high,low,close,volume,dividend,split"]
        for (index, day) in days.enumerated() {
            lines.append("CRSH,\(day),\(crash[index]),\(crash[index]),\(crash[index]),\(crash[index]),100000,0,1")
            lines.append("BOOM,\(day),\(boom[index]),\(boom[index]),\(boom[index]),\(boom[index]),50000,0,1")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension TestClientProtocol {
    func seedScenarioHistory() async throws {
        let admin = try await adminToken()
        let instruments = #"[{"symbol":"CRSH","name":"Crash Corp","sector":"Airlines"},{"symbol":"BOOM","name":"Boom Inc.","sector":"Software"}]"#
        #expect(try await send(.put, "/api/admin/instruments", body: instruments, token: admin).status == .ok)
        let prices = try await send(.post, "/api/admin/prices", body: ScenarioFixture.csv, contentType: "text/csv", token: admin)
        #expect(prices.status == .ok, "\(String(buffer: prices.body))")
    }

    /// Creates an isolated league with a market of its own; returns its id and the owner's league portfolio.
    func scenarioLeague(_ market: String, extra: String = "", token: String) async throws -> (id: Int, portfolio: Int, body: String) {
        let response = try await send(.post, "/api/leagues/create",
                                      body: #"{"name":"Scenario","mode":"isolated","startingCash":"10000","market":\#(market)\#(extra)}"#, token: token)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        let id = try JSONDecoder().decode(MadeBody.self, from: Data(buffer: response.body)).id
        let portfolios = try await decode([PortfolioSummaryBody].self, "/api/portfolios", token: token)
        return (id, try #require(portfolios.first { $0.leagueId == id }).id, String(buffer: response.body))
    }

    func leagueMarket(_ league: Int, token: String) async throws -> LeagueMarketBody {
        try await decode(LeagueMarketBody.self, "/api/leagues/\(league)/market", token: token)
    }

    func advance(_ league: Int, days: Int? = nil, token: String) async throws -> LeagueMarketBody {
        let response = try await send(.post, "/api/leagues/\(league)/market/advance", body: days.map { #"{"days":\#($0)}"# } ?? "", token: token)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        try await waitForPriceFollowUps()
        return try JSONDecoder().decode(LeagueMarketBody.self, from: Data(buffer: response.body))
    }
}

@Suite("Scenario leagues")
struct ScenarioLeagueTests {
    static let window = #"{"kind":"replay","from":"2020-02-18","to":"2020-02-24"}"#

    @Test("a replay league trades, fills orders and values at its own day's closes while every other portfolio sees today's market; the host advances it to the window's last day")
    func replayLeague() async throws {
        try await TestApp.run { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("host").token
            let (league, portfolio, created) = try await client.scenarioLeague(Self.window, token: host)
            #expect(created.contains(#""market":{"#) && created.contains(#""from":"2020-02-18""#))
            var market = try await client.leagueMarket(league, token: host)
            #expect(market.day == 1 && market.days == 5 && !market.blind && market.from == "2020-02-18" && market.to == "2020-02-24")
            #expect(market.symbols.map(\.symbol) == ["BOOM", "CRSH"] && market.price("CRSH") == "50.00" && market.price("BOOM") == "10.00")
            #expect(market.symbols.first { $0.symbol == "CRSH" }?.realName == "Crash Corp")

            // The league buys at day 1's close; a personal portfolio at the real market's last close.
            let bought = try await client.tradeOK("buy", "CRSH", 10, token: host, portfolioID: portfolio)
            #expect(bought.trade.price == "50.00" && bought.position.symbol == "CRSH" && bought.trade.symbol == "CRSH")
            let personal = try await client.tradeOK("buy", "CRSH", 1, token: host)
            #expect(personal.trade.price == "20.00")
            // A stop sale waits for the league's next day: CRSH closes at 40 on day 2.
            let stop = try await client.placeOrderOK(
                #"{"symbol":"CRSH","side":"sell","quantity":10,"type":"stop","stopPrice":"45","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                token: host)
            #expect(stop.status == "new" && stop.symbol == "CRSH")
            market = try await client.advance(league, token: host)
            #expect(market.day == 2 && market.price("CRSH") == "40.00")
            let filled = try await client.eventually({ try await client.order(stop.id, token: host) }) { $0.status == "filled" }
            #expect(filled.filledAveragePrice == "40.00")
            let valued = try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: host)
            #expect(valued.cash == "9900.00" && valued.holdings.isEmpty)
            // Lists filtered by a symbol name it as the league shows it.
            struct Page: Decodable { struct Item: Decodable { let symbol: String }; let items: [Item] }
            let crashes = try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)&symbol=CRSH", token: host)
            #expect(crashes.items.map(\.symbol) == ["CRSH", "CRSH"])
            let orders = try await client.decode(Page.self, "/api/orders?portfolioId=\(portfolio)&status=closed&symbol=crsh", token: host)
            #expect(orders.items.count == 2)  // the market buy (order_book lists trades too) and the stop sale

            // The host scripts a shock for day 4; members see it only once it has happened.
            let player = try await client.register("player").token
            let code = try #require(created.firstMatch(of: /"code":"([A-Z0-9]+)"/)?.1)
            #expect(try await client.post("/api/leagues/join/\(code)", json: "", token: player).status == .ok)
            let scheduled = try await client.send(.post, "/api/leagues/\(league)/events",
                body: #"{"day":4,"symbols":["boom"],"changePercent":"50","headline":"BOOM wins the contract"}"#, token: host)
            #expect(scheduled.status == .created, "\(String(buffer: scheduled.body))")
            let event = try JSONDecoder().decode(ScenarioEventBody.self, from: Data(buffer: scheduled.body))
            #expect(event.symbols == ["BOOM"] && event.changePercent == "50" && !event.applied)
            #expect(try await client.decode([ScenarioEventBody].self, "/api/leagues/\(league)/events", token: player).isEmpty)
            #expect(try await client.decode([ScenarioEventBody].self, "/api/leagues/\(league)/events", token: host).map(\.id) == [event.id])
            market = try await client.advance(league, days: 2, token: host)
            #expect(market.day == 4 && market.price("BOOM") == "18.00" && market.price("CRSH") == "35.00")
            let seen = try await client.decode([ScenarioEventBody].self, "/api/leagues/\(league)/events", token: player)
            #expect(seen.map(\.applied) == [true])
            let news = String(buffer: try await client.get("/api/leagues/\(league)/news", token: player).body)
            #expect(news.contains("BOOM wins the contract"))
            // An event for a day the league has reached is refused.
            let late = try await client.send(.post, "/api/leagues/\(league)/events",
                body: #"{"day":4,"changePercent":"-10","headline":"Too late"}"#, token: host)
            #expect(late.status == .conflict && String(buffer: late.body).contains("event_day_passed"))

            // To the last day, and no further.
            market = try await client.advance(league, days: 10, token: host)
            #expect(market.day == 5 && market.price("CRSH") == "20.00" && market.price("BOOM") == "19.50")
            // Equal amounts of both from day 1: CRSH 20/50, BOOM 19.5/10 → (0.4 + 1.95) / 2 = +17.5 %.
            #expect(market.marketReturnPercent == "17.50")
            #expect(market.symbols.map(\.changePercent) == ["95.00", "-60.00"])
            // The host lost 100 (−1 %), the player kept their cash: against the market, −18.5 and −17.5 points.
            #expect(market.againstMarket.map { [$0.username ?? "", $0.returnPercent, $0.differencePercent] }
                    == [["player", "0.00", "-17.50"], ["host", "-1.00", "-18.50"]])
            let past = try await client.send(.post, "/api/leagues/\(league)/market/advance", body: "", token: host)
            #expect(past.status == .conflict && String(buffer: past.body).contains("market_last_day"))

            // The real market's listing never shows a league's instruments.
            let listing = String(buffer: try await client.get("/api/stock/market?limit=100", token: player).body)
            #expect(!listing.contains("@"))
        }
    }

    @Test("a replay is deterministic: the same window and events give the same prices in another league")
    func deterministic() async throws {
        try await TestApp.run { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("twice").token
            var seen: [[String?]] = []
            for _ in 0..<2 {
                let (league, _, _) = try await client.scenarioLeague(Self.window, token: host)
                let scheduled = try await client.send(.post, "/api/leagues/\(league)/events",
                    body: #"{"day":3,"changePercent":"-33.3333","headline":"Everything falls"}"#, token: host)
                #expect(scheduled.status == .created)
                var prices: [String?] = []
                for day in 1...5 {
                    let market = day == 1 ? try await client.leagueMarket(league, token: host) : try await client.advance(league, token: host)
                    prices += market.symbols.map(\.price)
                }
                seen.append(prices)
            }
            #expect(seen[0] == seen[1])
            // Day 3: 30 × (1 − 0.333333) = 20.00001 → 20.00; BOOM 12 × 0.666667 = 8.000004 → 8.00.
            #expect(seen[0][4] == "8.00" && seen[0][5] == "20.00")
        }
    }

    @Test("a blind league shows aliases rebased to 100 and no real symbol, name or date of the period until it ends, then reveals them")
    func blind() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("blindhost").token
            let ends = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
            let market = #"{"kind":"replay","from":"2020-02-18","to":"2020-02-24","blind":true}"#
            let (league, portfolio, created) = try await client.scenarioLeague(market, extra: #","endsAt":"\#(ends)""#, token: host)
            var answers = [created]
            var shown = try await client.leagueMarket(league, token: host)
            #expect(shown.blind && shown.from == nil && shown.to == nil)
            #expect(Set(shown.symbols.map(\.symbol)) == ["S01", "S02"] && Set(shown.symbols.map(\.name)) == ["Company 01", "Company 02"])
            #expect(shown.symbols.allSatisfy { $0.price == "100.00" && $0.realSymbol == nil && $0.realName == nil })
            let crash = try #require(shown.symbols.first { $0.symbol == "S01" })
            let bought = try await client.tradeOK("buy", crash.symbol, 10, token: host, portfolioID: portfolio)
            #expect(bought.trade.price == "100.00")
            // The real symbols are not tradable in the league.
            let real = try await client.trade("buy", #"{"symbol":"CRSH","amount":1,"portfolioId":\#(portfolio)}"#, token: host)
            #expect(real.status == .notFound)
            // A resting order and a scripted event, told to members as news and notifications.
            _ = try await client.placeOrderOK(
                #"{"symbol":"S01","side":"sell","quantity":5,"type":"limit","limitPrice":"50","timeInForce":"gtc","note":"Take the money","portfolioId":\#(portfolio)}"#,
                token: host)
            #expect(try await client.send(.post, "/api/leagues/\(league)/events",
                body: #"{"day":3,"symbols":["S02"],"changePercent":"10","headline":"Company 02 wins"}"#, token: host).status == .created)
            shown = try await client.advance(league, days: 2, token: host)
            #expect(shown.day == 3)
            let symbol = crash.symbol
            for uri in ["/api/leagues/\(league)", "/api/leagues/\(league)/market", "/api/portfolio?portfolioId=\(portfolio)",
                        "/api/transactions?portfolioId=\(portfolio)", "/api/orders?portfolioId=\(portfolio)", "/api/leagues",
                        "/api/portfolios", "/api/leagues/\(league)/news", "/api/notifications", "/api/leagues/\(league)/events",
                        "/api/leagues/\(league)/leaderboard", "/api/leagues/\(league)/history", "/api/leagues/\(league)/report.csv",
                        "/api/leagues/\(league)/journal", "/api/activities?portfolioId=\(portfolio)", "/api/transactions.csv?portfolioId=\(portfolio)",
                        "/api/portfolios/\(portfolio)/history", "/api/portfolios/\(portfolio)/performance?benchmark=market",
                        "/api/portfolios/\(portfolio)/pnl", "/api/portfolios/\(portfolio)/composition", "/api/portfolios/\(portfolio)/risk",
                        "/api/stock/\(symbol)?leagueId=\(league)", "/api/stock/\(symbol)/chart?leagueId=\(league)",
                        "/api/stock/symbols?symbols=S01,S02&leagueId=\(league)", "/api/achievements", "/api/me/export"] {
                let response = try await client.get(uri, token: host)
                #expect(response.status == .ok, "\(uri)")
                answers.append(String(buffer: response.body))
            }
            #expect(answers.contains { $0.contains("Company 02 wins") } && answers.contains { $0.contains("Take the money") })
            let chart = try await client.get("/api/stock/\(symbol)/chart?leagueId=\(league)", token: host)
            #expect(String(buffer: chart.body).contains(#""close":"100.00""#))
            for answer in answers {
                for secret in ["CRSH", "BOOM", "Crash Corp", "Boom Inc", "2020-02", "Airlines", "Software", "@"] {
                    #expect(!answer.contains(secret), "an answer holds \(secret): \(answer.prefix(300))")
                }
            }
            // After its end, everything is revealed: the host ends it in two seconds.
            let soon = ISO8601DateFormatter().string(from: Date().addingTimeInterval(2))
            #expect(try await client.send(.patch, "/api/leagues/\(league)", body: #"{"endsAt":"\#(soon)"}"#, token: host).status == .ok)
            let revealed = try await client.eventually({ try await client.leagueMarket(league, token: host) }) { $0.ended }
            #expect(revealed.ended && revealed.from == "2020-02-18" && revealed.to == "2020-02-24")
            #expect(Set(revealed.symbols.compactMap(\.realSymbol)) == ["CRSH", "BOOM"])
            #expect(revealed.symbols.allSatisfy { $0.realName != nil })
        }
    }

    @Test("a league on a clock moves a day every dayMinutes from its start, whichever process gets there; its host cannot advance it")
    func clock() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("clocked").token
            let start = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-150))
            let market = #"{"kind":"replay","from":"2020-02-18","to":"2020-02-24","dayMinutes":1}"#
            let (league, _, _) = try await client.scenarioLeague(market, extra: #","startsAt":"\#(start)""#, token: host)
            // Started 2.5 minutes ago, a day a minute: day 3 (day 4 on a machine slow enough to take half a minute here).
            let moved = try await client.eventually({ try await client.leagueMarket(league, token: host) }) { $0.day >= 3 }
            #expect((3...4).contains(moved.day) && moved.dayMinutes == 1 && moved.nextDayAt != nil)
            #expect(moved.price("CRSH") == ScenarioFixture.crash[moved.day - 1] + ".00")
            let refused = try await client.send(.post, "/api/leagues/\(league)/market/advance", body: "", token: host)
            #expect(refused.status == .conflict && String(buffer: refused.body).contains("market_on_clock"))
        }
    }

    @Test("bad markets and events are refused with a clear problem, and nothing is made")
    func refusals() async throws {
        try await TestApp.run { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("refused").token
            for (market, extra) in [(#"{"kind":"live","from":"2020-02-18","to":"2020-02-24"}"#, ""),
                                    (#"{"kind":"replay","from":"2020-02-24","to":"2020-02-18"}"#, ""),
                                    (#"{"kind":"replay","from":"2020-02-18","to":"2020-02-24","dayMinutes":0}"#, ""),
                                    (#"{"kind":"replay","from":"1990-01-01","to":"1990-02-01"}"#, ""),
                                    (#"{"kind":"replay","from":"2020-02-18","to":"2020-02-3x"}"#, "")] {
                let response = try await client.send(.post, "/api/leagues/create",
                    body: #"{"name":"Bad","mode":"isolated","market":\#(market)\#(extra)}"#, token: host)
                #expect(response.status == .unprocessableContent, "\(market): \(String(buffer: response.body))")
            }
            let shared = try await client.send(.post, "/api/leagues/create", body: #"{"name":"Bad","market":\#(Self.window)}"#, token: host)
            #expect(shared.status == .unprocessableContent)
            #expect(try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: host).count == 1)

            let (league, portfolio, created) = try await client.scenarioLeague(Self.window, token: host)
            for body in [#"{"day":1,"changePercent":"10","headline":"Day one"}"#, #"{"day":6,"changePercent":"10","headline":"Too far"}"#,
                         #"{"day":2,"changePercent":"-95","headline":"Too deep"}"#, #"{"day":2,"changePercent":"501","headline":"Too high"}"#,
                         #"{"day":2,"changePercent":"10","headline":"  "}"#, #"{"day":2,"symbols":["NOPE"],"changePercent":"10","headline":"Who"}"#,
                         #"{"day":2,"symbols":[],"changePercent":"10","headline":"None"}"#] {
                let response = try await client.send(.post, "/api/leagues/\(league)/events", body: body, token: host)
                #expect(response.status == .unprocessableContent, "\(body): \(String(buffer: response.body))")
            }
            #expect(try await client.decode([ScenarioEventBody].self, "/api/leagues/\(league)/events", token: host).isEmpty)
            // A member is neither the host who advances nor the one who scripts.
            let player = try await client.register("member").token
            let code = try #require(created.firstMatch(of: /"code":"([A-Z0-9]+)"/)?.1)
            #expect(try await client.post("/api/leagues/join/\(code)", json: "", token: player).status == .ok)
            #expect(try await client.send(.post, "/api/leagues/\(league)/market/advance", body: "", token: player).status == .forbidden)
            #expect(try await client.send(.post, "/api/leagues/\(league)/events", body: #"{"day":2,"changePercent":"1","headline":"Mine"}"#,
                                          token: player).status == .forbidden)
            #expect(try await client.leagueMarket(league, token: host).day == 1)
            // A stored symbol of the league is nobody's to name.
            let named = try await client.trade("buy", #"{"symbol":"CRSH@\#(league)","amount":1}"#, token: host)
            #expect(named.status == .notFound)
            let inLeague = try await client.trade("buy", #"{"symbol":"CRSH@\#(league)","amount":1,"portfolioId":\#(portfolio)}"#, token: host)
            #expect(inLeague.status == .notFound)
            for target in ["", #","portfolioId":\#(portfolio)"#] {
                let order = try await client.send(.post, "/api/orders",
                    body: #"{"symbol":"CRSH@\#(league)","side":"buy","quantity":1,"type":"limit","limitPrice":"1","timeInForce":"gtc"\#(target)}"#, token: host)
                #expect(order.status == .notFound && String(buffer: order.body).contains("unknown_symbol"), "\(String(buffer: order.body))")
            }
            // A league of the real market has no market of its own.
            let plain = try await client.send(.post, "/api/leagues/create", body: #"{"name":"Plain","mode":"isolated"}"#, token: host)
            let plainID = try JSONDecoder().decode(MadeBody.self, from: Data(buffer: plain.body)).id
            let none = try await client.get("/api/leagues/\(plainID)/market", token: host)
            #expect(none.status == .notFound && String(buffer: none.body).contains("no_league_market"))
        }
    }
    @Test("a scenario league's realism rules keep its clock: margin closes at each league day's prices, a call standing two closes is sold; the volume cap counts its days")
    func marginAndCapOnTheLeaguesClock() async throws {
        try await TestApp.run(configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("margined").token
            let rules = #","rules":{"marginPercent":"50","maintenancePercent":"50","volumeCapPercent":"1"}"#
            let (league, portfolio, _) = try await client.scenarioLeague(Self.window, extra: rules, token: host)
            // Day 1 has no day before: no cap. 300 CRSH at 50 borrows 5,000.
            let bought = try await client.tradeOK("buy", "CRSH", 300, token: host, portfolioID: portfolio)
            #expect(bought.cash == "-5000.00")
            // Day 2: 1 % of day 1's 100,000 shares is 1,000 a day; beyond it, volume_cap.
            _ = try await client.advance(league, token: host)
            let capped = try await client.trade("buy", #"{"symbol":"BOOM","amount":501,"portfolioId":\#(portfolio)}"#, token: host)
            #expect(capped.status == .unprocessableContent && String(buffer: capped.body).contains("volume_cap"))
            #expect(String(buffer: capped.body).contains(#""available":500"#))
            // A shock on day 4: CRSH 35 × 0.8 = 28.
            #expect(try await client.send(.post, "/api/leagues/\(league)/events",
                body: #"{"day":4,"symbols":["CRSH"],"changePercent":"-20","headline":"Crash Corp misses"}"#, token: host).status == .created)
            // Day 3's close at 30: equity 9,000 − 5,000 = 4,000 against 50 % of 9,000: a call.
            _ = try await client.advance(league, days: 2, token: host)
            let called = try await client.eventually({ try await client.kindedNotifications(token: host) }) {
                $0.contains { $0.kind == "margin_call" }
            }
            #expect(called.filter { $0.kind == "margin_call" }.count == 1)
            #expect(try await client.kindedNotifications(token: host).allSatisfy { $0.kind != "liquidated" })
            // Day 4's close at 28 is below too: on day 5 (CRSH 20 × 0.8 = 16) the position is sold.
            _ = try await client.advance(league, token: host)
            let sold = try await client.eventually({
                try await client.decode(PortfolioBody.self, "/api/portfolio?portfolioId=\(portfolio)", token: host)
            }) { $0.holdings.isEmpty }
            #expect(sold.cash == "-200.00")
            struct Page: Decodable { let items: [PricedTradeBody] }
            let trades = try await client.decode(Page.self, "/api/transactions?portfolioId=\(portfolio)", token: host).items
            #expect(trades.first?.source == "liquidation" && trades.first?.price == "16.00" && trades.first?.quantity == 300)
        }
    }

    @Test("a bot's key of a scenario league's portfolio trades, lists assets and reads bars of that league's market under its symbols, dated by the league's calendar")
    func alpacaKeyOfALeague() async throws {
        try await TestApp.run { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("botmaker").token
            let market = #"{"kind":"replay","from":"2020-02-18","to":"2020-02-24","blind":true}"#
            let (league, portfolio, _) = try await client.scenarioLeague(market, token: host)
            let key = try await client.apiKey(token: host, portfolioID: portfolio)
            _ = try await client.advance(league, token: host)
            var answers: [String] = []
            let assets = try await client.alpaca(.get, "/v2/assets", key: key)
            answers.append(String(buffer: assets.body))
            #expect(assets.status == .ok && answers[0].contains(#""symbol":"S01""#) && answers[0].contains(#""symbol":"S02""#))
            let order = try await client.alpaca(.post, "/v2/orders", key: key,
                body: #"{"symbol":"S02","qty":"5","side":"buy","type":"market","time_in_force":"day"}"#)
            answers.append(String(buffer: order.body))
            #expect(order.status == .ok, "\(answers[1])")
            let positions = try await client.alpaca(.get, "/v2/positions", key: key)
            answers.append(String(buffer: positions.body))
            #expect(answers[2].contains(#""symbol":"S02""#))
            let bars = try await client.alpaca(.get, "/v2/stocks/bars?symbols=S01,S02&timeframe=1Day&start=2000-01-01", key: key)
            answers.append(String(buffer: bars.body))
            struct Bars: Decodable { struct Bar: Decodable { let t: String; let c: Double }; let bars: [String: [Bar]] }
            let parsed = try JSONDecoder().decode(Bars.self, from: Data(buffer: bars.body))
            #expect(parsed.bars["S01"]?.count == 2 && parsed.bars["S02"]?.count == 2)
            #expect(parsed.bars.values.allSatisfy { $0.first?.c == 100 })
            let latest = try await client.alpaca(.get, "/v2/stocks/S01/quotes/latest", key: key)
            answers.append(String(buffer: latest.body))
            #expect(latest.status == .ok && answers.last!.contains(#""symbol":"S01""#))
            let position = try await client.alpaca(.get, "/v2/positions/S02", key: key)
            #expect(position.status == .ok)
            let listed = try await client.alpaca(.get, "/v2/orders?status=all&symbols=S02", key: key)
            answers.append(String(buffer: listed.body))
            #expect(answers.last!.contains(#""symbol":"S02""#))
            for answer in answers {
                for secret in ["CRSH", "BOOM", "Crash Corp", "Boom Inc", "2020-02", "@"] {
                    #expect(!answer.contains(secret), "an answer holds \(secret): \(answer.prefix(300))")
                }
            }
            // A key of the personal portfolio sees the real market, not the league's.
            let personal = try await client.apiKey(token: host)
            let real = String(buffer: try await client.alpaca(.get, "/v2/assets", key: personal).body)
            #expect(real.contains(#""symbol":"CRSH""#) && !real.contains(#""symbol":"S01""#))
        }
    }
    @Test("the database keeps a scenario league's instruments in its own portfolios, and its portfolios out of the real market")
    func holdingsStayInTheirMarket() async throws {
        try await TemporaryDatabase.with { database in
            let (league, portfolio, personal) = try await TestApp.run(on: database) { client in
                try await client.seedScenarioHistory()
                let host = try await client.register("guarded").token
                let (league, portfolio, _) = try await client.scenarioLeague(Self.window, token: host)
                let personal = try await client.decode([PortfolioSummaryBody].self, "/api/portfolios", token: host).first { $0.leagueId == nil }
                return (league, portfolio, try #require(personal).id)
            }
            try await database.withPool { pool in
                for (portfolioID, symbol) in [(personal, "CRSH@\(league)"), (portfolio, "CRSH")] {
                    await #expect(throws: PostgresError.self) {
                        try await pool.execute("INSERT INTO holdings (portfolio_id, symbol, quantity, cost_basis) VALUES (\(portfolioID), \(symbol), 1, 1)")
                    }
                }
                let own = "BOOM@\(league)"
                let inserted = try await pool.execute(
                    "INSERT INTO holdings (portfolio_id, symbol, quantity, cost_basis) VALUES (\(portfolio), \(own), 1, 1)")
                #expect(inserted == 1)
            }
        }
    }
    @Test("a league portfolio's value history and risk figures go by the league's days: a point a league day, at that day's closes, dated by the league's calendar")
    func historyByLeagueDay() async throws {
        try await TestApp.run { client in
            try await client.seedScenarioHistory()
            let host = try await client.register("historian").token
            let (league, portfolio, created) = try await client.scenarioLeague(Self.window, token: host)
            _ = try await client.tradeOK("buy", "CRSH", 10, token: host, portfolioID: portfolio)
            _ = try await client.advance(league, token: host)
            // Bought on day 2 too: counted on day 2, not before.
            _ = try await client.tradeOK("buy", "BOOM", 10, token: host, portfolioID: portfolio)
            _ = try await client.advance(league, token: host)
            struct History: Decodable { struct Point: Decodable { let date: String; let netWorth: String; let netInflow: String }; let points: [Point] }
            let history = try await client.decode(History.self, "/api/portfolios/\(portfolio)/history", token: host)
            // Day 1: 9,500 + 10 × 50; day 2: 9,390 + 10 × 40 + 10 × 11; day 3 (now): 9,390 + 300 + 120.
            #expect(history.points.map(\.netWorth) == ["10000.00", "9900.00", "9810.00"])
            #expect(history.points.map(\.netInflow) == ["10000.00", "0.00", "0.00"])
            // Dated one trading day a league day from the league's start, as its bars are.
            let chart = try await client.get("/api/stock/CRSH/chart?leagueId=\(league)", token: host)
            struct Chart: Decodable { struct Point: Decodable { let date: String }; let points: [Point] }
            let dates = try JSONDecoder().decode(Chart.self, from: Data(buffer: chart.body)).points.map(\.date)
            #expect(history.points.map(\.date) == dates && dates.count == 3)
            #expect(!created.isEmpty)
            struct Risk: Decodable { let days: Int }
            #expect(try await client.decode(Risk.self, "/api/portfolios/\(portfolio)/risk", token: host).days == 2)
        }
    }
    @Test("a league's day passing keeps every portfolio's kept values (the price-history epoch stays); new real bars move it on")
    func advancingKeepsKeptValues() async throws {
        try await TemporaryDatabase.with { database in
            try await database.withPool { pool in
                func epoch() async throws -> Int { try await pool.query("SELECT epoch FROM price_history_epoch").decodeColumn(Int.self)[0] }
                let before = try await TestApp.run(on: database) { client in
                    try await client.seedScenarioHistory()
                    let host = try await client.register("epochs").token
                    let (league, _, _) = try await client.scenarioLeague(Self.window, token: host)
                    return (league, host)
                }
                let seeded = try await epoch()
                try await TestApp.run(on: database) { client in
                    _ = try await client.advance(before.0, days: 2, token: before.1)
                }
                #expect(try await epoch() == seeded)
                try await TestApp.run(on: database) { client in
                    let csv = "symbol,date,open,high,low,close,volume,dividend,split\nCRSH,2020-02-25,19,19,19,19,1000,0,1\n"
                    let response = try await client.send(.post, "/api/admin/prices", body: csv, contentType: "text/csv", token: try await client.adminToken())
                    #expect(response.status == .ok)
                }
                #expect(try await epoch() > seeded)
            }
        }
    }
    @Test("a day order whose placing was still committing when the league's day ended expires with it, unfilled; a league order is replaced in the league")
    func dayOrderOfAnEndedDay() async throws {
        try await TemporaryDatabase.with { database in
            let (orderID, replaced) = try await TestApp.run(on: database, configure: { $0.orderSweepInterval = .seconds(3600) }) { client in
                try await client.seedScenarioHistory()
                let host = try await client.register("latecomer").token
                let (league, portfolio, _) = try await client.scenarioLeague(Self.window, token: host)
                _ = try await client.advance(league, token: host)
                let order = try await client.placeOrderOK(
                    #"{"symbol":"CRSH","side":"buy","quantity":1,"type":"limit","limitPrice":"30","timeInForce":"day","portfolioId":\#(portfolio)}"#,
                    token: host)
                let kept = try await client.placeOrderOK(
                    #"{"symbol":"BOOM","side":"buy","quantity":1,"type":"limit","limitPrice":"5","timeInForce":"gtc","portfolioId":\#(portfolio)}"#,
                    token: host)
                let changed = try await client.send(.patch, "/api/orders/\(kept.id)", body: #"{"limitPrice":"6"}"#, token: host)
                #expect(changed.status == .ok, "\(String(buffer: changed.body))")
                return (order.id, try JSONDecoder().decode(OrderBody.self, from: Data(buffer: changed.body)))
            }
            #expect(replaced.symbol == "BOOM" && replaced.limitPrice == "6.00")
            // As if its placing had begun before the day did: it belongs to day 1, which has ended.
            try await database.withPool { pool in
                _ = try await pool.execute("UPDATE orders SET created_at = created_at - interval '1 hour' WHERE id = \(orderID)")
            }
            try await TestApp.run(on: database, configure: { $0.orderSweepInterval = .milliseconds(50) }) { client in
                let host = try await client.login("latecomer")
                let token = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: host.body)).token
                let expired = try await client.eventually({ try await client.order(orderID, token: token) }) { $0.status != "new" }
                #expect(expired.status == "expired" && expired.rejectReason == "The league day ended.")
            }
        }
    }
}
