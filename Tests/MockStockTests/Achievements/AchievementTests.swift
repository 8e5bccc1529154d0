import Foundation
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct AchievementBody: Decodable {
    let code: String
    let name: String
    let description: String
    let reward: String
    let earnedAt: String?
    let progress: Int
    let target: Int
}

extension TestClientProtocol {
    func achievements(token: String) async throws -> [String: AchievementBody] {
        let list = try await decode([AchievementBody].self, "/api/achievements", token: token)
        return Dictionary(uniqueKeysWithValues: list.map { ($0.code, $0) })
    }

    /// The codes of the achievements the user has earned.
    func earned(token: String) async throws -> Set<String> {
        Set(try await achievements(token: token).values.filter { $0.earnedAt != nil }.map(\.code))
    }

    func rewardMovements(token: String) async throws -> [CashMovementPageBody.Item] {
        try await decode(CashMovementPageBody.self, "/api/cash-movements?limit=100", token: token).items.filter { $0.kind == "reward" }
    }
}

@Suite("Achievements")
struct AchievementTests {
    @Test("the catalog: eight achievements in order, none earned, with targets")
    func catalog() async throws {
        try await TestApp.run { client in
            let player = try await client.register("newcomer")
            let list = try await client.decode([AchievementBody].self, "/api/achievements", token: player.token)
            #expect(list.map(\.code) == [
                "first_trade", "first_profit", "ten_trades", "diversified", "joined_league", "created_league", "up_fifty", "podium",
            ])
            #expect(list.allSatisfy { $0.earnedAt == nil && $0.progress == 0 && !$0.name.isEmpty && !$0.description.isEmpty })
            #expect(list.first { $0.code == "ten_trades" }?.target == 10)
            #expect(list.first { $0.code == "first_trade" }?.reward == "100.00")
            #expect(try await client.get("/api/achievements", token: nil).status == .unauthorized)
        }
    }

    @Test("trading earns first trade, in the green, diversified and active trader — once each, with reward and notice")
    func tradingAchievements() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let admin = try await client.adminToken()
            let symbols = ["B1", "B2", "B3", "B4", "B5"]
            let instruments = symbols.map { #"{"symbol":"\#($0)","name":"Basket \#($0)"}"# }.joined(separator: ",")
            #expect(try await client.send(.put, "/api/admin/instruments", body: "[\(instruments)]", token: admin).status == .ok)
            for symbol in symbols { try await client.setPrice(symbol, "1") }
            let token = try await client.register("achiever").token

            _ = try await client.tradeOK("buy", "ONE", 2, token: token)
            #expect(try await client.earned(token: token) == ["first_trade"])
            // Selling at the price paid is no profit.
            _ = try await client.tradeOK("sell", "ONE", 1, token: token)
            #expect(try await client.achievements(token: token)["first_profit"]?.earnedAt == nil)
            try await client.setPrice("ONE", "1.50")
            _ = try await client.tradeOK("sell", "ONE", 1, token: token)
            #expect(try await client.earned(token: token) == ["first_trade", "first_profit"])

            for symbol in symbols.dropLast() { _ = try await client.tradeOK("buy", symbol, 1, token: token) }
            var progress = try await client.achievements(token: token)
            #expect(progress["diversified"]?.progress == 4)
            #expect(progress["ten_trades"]?.progress == 7)
            _ = try await client.tradeOK("buy", "B5", 1, token: token)
            progress = try await client.achievements(token: token)
            #expect(progress["diversified"]?.earnedAt != nil)
            #expect(progress["diversified"]?.progress == 5)
            #expect(progress["ten_trades"]?.progress == 8)
            _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            #expect(try await client.achievements(token: token)["ten_trades"]?.earnedAt != nil)

            let earned = try await client.earned(token: token)
            #expect(earned == ["first_trade", "first_profit", "diversified", "ten_trades"])

            // Exactly one reward movement and one notification per achievement.
            let rewards = try await client.rewardMovements(token: token)
            #expect(rewards.map(\.amount).sorted() == ["100.00", "250.00", "500.00", "500.00"])
            let notices = try await client.decode(NotificationPageBody.self, "/api/notifications?limit=100", token: token).items
            #expect(notices.filter { $0.title.hasPrefix("Achievement earned") }.count == 4)
            #expect(notices.contains { $0.title == "Achievement earned: In the green" })
        }
    }

    @Test("buying back a stock sold to nothing counts towards Diversified; after ten trades, more trades earn nothing again")
    func diversifiedByBuyingBack() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let admin = try await client.adminToken()
            let symbols = ["B1", "B2", "B3", "B4"]
            let instruments = symbols.map { #"{"symbol":"\#($0)","name":"Basket \#($0)"}"# }.joined(separator: ",")
            #expect(try await client.send(.put, "/api/admin/instruments", body: "[\(instruments)]", token: admin).status == .ok)
            for symbol in symbols { try await client.setPrice(symbol, "1") }
            let token = try await client.register("returner").token

            _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            _ = try await client.tradeOK("sell", "ONE", 1, token: token)
            for symbol in symbols { _ = try await client.tradeOK("buy", symbol, 1, token: token) }
            #expect(try await client.achievements(token: token)["diversified"]?.earnedAt == nil)
            // The holding of ONE is there with no shares; buying it again makes five stocks held.
            _ = try await client.tradeOK("buy", "ONE", 1, token: token)
            #expect(try await client.achievements(token: token)["diversified"]?.earnedAt != nil)

            for _ in 0..<4 { _ = try await client.tradeOK("buy", "ONE", 1, token: token) }
            #expect(try await client.earned(token: token) == ["first_trade", "diversified", "ten_trades"])
            for _ in 0..<3 { _ = try await client.tradeOK("buy", "ONE", 1, token: token) }
            let rewards = try await client.rewardMovements(token: token)
            #expect(rewards.map(\.amount).sorted() == ["100.00", "500.00", "500.00"])
        }
    }

    @Test("a price rise earns Up fifty percent at the next check, once, for the players it lifts")
    func upFifty() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = AchievementStore(pool: pool)
            try await TestApp.run(on: database, configure: StandingsTests.quietService()) { client in
                try await client.seedTradingMarket()
                let lucky = try await client.register("lucky").token
                let steady = try await client.register("steady").token
                _ = try await client.tradeOK("buy", "ONE", 5000, token: lucky)
                _ = try await client.tradeOK("buy", "TENTH", 10, token: steady)
                #expect(try await store.awardPriceAchievements() == 0)
                // lucky: 10,100 paid in, 5,100 cash + 5,000 shares at 3.00 = 20,100 ≥ 15,150.
                try await client.setPrice("ONE", "3")
                #expect(try await store.awardPriceAchievements() == 1)
                #expect(try await store.awardPriceAchievements() == 0)
                #expect(try await client.achievements(token: lucky)["up_fifty"]?.earnedAt != nil)
                #expect(try await client.achievements(token: steady)["up_fifty"]?.earnedAt == nil)
                #expect(try await client.rewardMovements(token: lucky).map(\.amount).sorted() == ["100.00", "2500.00"])
                let notices = try await client.decode(NotificationPageBody.self, "/api/notifications", token: lucky).items
                #expect(notices.contains { $0.title == "Achievement earned: Up fifty percent" })

                // Checked one portfolio at a time, players before, between and after others still earn it, once.
                let late = try await client.register("late").token
                _ = try await client.register("idle").token
                let later = try await client.register("later").token
                try await client.setPrice("ONE", "1")
                for token in [late, later] { _ = try await client.tradeOK("buy", "ONE", 4000, token: token) }
                #expect(try await store.awardPriceAchievements(chunk: 1) == 0)
                try await client.setPrice("ONE", "4")
                #expect(try await store.awardPriceAchievements(chunk: 1) == 2)
                #expect(try await store.awardPriceAchievements(chunk: 1) == 0)
                for token in [late, later] { #expect(try await client.achievements(token: token)["up_fifty"]?.earnedAt != nil) }
            }
            await pool.close()
        }
    }

    @Test("20 simultaneous first trades pay the first-trade reward exactly once")
    func concurrentFirstTrades() async throws {
        try await TestApp.run { client in
            try await client.seedTradingMarket()
            let token = try await client.register("rusher").token
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await client.trade("buy", #"{"symbol":"ONE","amount":1}"#, token: token).status.code }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20))
            let rewards = try await client.rewardMovements(token: token)
            #expect(rewards.filter { $0.note == "Achievement: First trade" }.count == 1)
            #expect(rewards.filter { $0.note == "Achievement: Active trader" }.count <= 1)
            // Cash is the starting cash plus the rewards paid, minus the 20 shares bought.
            let paid = rewards.reduce(Decimal(10000)) { $0 + Decimal(string: $1.amount)! }
            let cash = Decimal(string: try await client.decode(PortfolioBody.self, "/api/portfolio", token: token).cash)!
            #expect(cash == paid - 20)
        }
    }

    @Test("creating and joining leagues earn their achievements once, whatever the number of leagues")
    func leagueAchievements() async throws {
        try await TestApp.run { client in
            let owner = try await client.register("founder")
            let member = try await client.register("joiner")
            let first = try await client.createLeague(#"{"name":"One"}"#, token: owner.token)
            let second = try await client.createLeague(#"{"name":"Two"}"#, token: owner.token)
            #expect(try await client.earned(token: owner.token) == ["created_league"])
            #expect(try await client.join(first.code, token: member.token).status == .ok)
            #expect(try await client.join(second.code, token: member.token).status == .ok)
            #expect(try await client.earned(token: member.token) == ["joined_league"])
            #expect(try await client.rewardMovements(token: owner.token).map(\.amount) == ["250.00"])
            #expect(try await client.rewardMovements(token: member.token).map(\.amount) == ["250.00"])
            let portfolio = try await client.decode(PortfolioBody.self, "/api/portfolio", token: member.token)
            #expect(portfolio.cash == "10250.00")
        }
    }
}
