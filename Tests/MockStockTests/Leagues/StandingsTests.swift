import Foundation
import HummingbirdTesting
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct TimedStandingPageBody: Decodable {
    let items: [StandingBody]
    let total: Int
    let asOf: String
}

struct RankHistoryBody: Decodable {
    struct Point: Decodable {
        let day: String
        let rank: Int
        let netWorth: String
    }

    let userId: Int
    let items: [Point]
}

/// The standings service's rounds are called directly here; the app's own service is
/// slowed down so it never races the test.
@Suite("League standings")
struct StandingsTests {
    static func quietService(liveLimit: Int = 1000) -> (inout AppConfiguration) -> Void {
        { configuration in
            configuration.standings.refreshInterval = .seconds(3600)
            configuration.standings.unchangedInterval = .seconds(3600)
            configuration.standings.snapshotCheckInterval = .seconds(3600)
            configuration.standings.roundInterval = .seconds(3600)
            configuration.standings.priceAchievementInterval = .seconds(3600)
            configuration.standings.riskCheckInterval = .seconds(3600)
            configuration.standings.liveLimit = liveLimit
        }
    }

    @Test("a finished league freezes its final standings, tells every member their rank, and puts the top three on the podium once")
    func finishing() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 1000, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: Self.quietService()) { client in
                try await client.seedTradingMarket()
                let players = [
                    try await client.register("gold"), try await client.register("silver"),
                    try await client.register("bronze"), try await client.register("fourth"),
                ]
                let league = try await client.createLeague(#"{"name":"Final","endsAt":"2099-01-01T00:00:00Z"}"#, token: players[3].token)
                for player in players.dropLast() { #expect(try await client.join(league.code, token: player.token).status == .ok) }
                // Everyone has 10,250 now; ONE shares bought at 1 set them apart when it rises.
                for (index, player) in players.enumerated() where index < 3 {
                    _ = try await client.tradeOK("buy", "ONE", 300 - index * 100, token: player.token)
                }
                try await client.setPrice("ONE", "3")
                #expect(try await store.finishEndedLeagues().isEmpty)
                try await pool.execute(
                    "UPDATE leagues SET starts_at = now() - interval '1 day', ends_at = now() - interval '1 second' WHERE id = \(league.id)"
                )
                #expect(try await store.finishEndedLeagues() == [league.id])
                #expect(try await store.finishEndedLeagues().isEmpty)

                let final = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: players[0].token)
                #expect(final.items.map(\.username) == ["gold", "silver", "bronze", "fourth"])
                // Prices move after the end; the final standings do not.
                try await client.setPrice("ONE", "10")
                let later = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: players[0].token)
                #expect(later.items.map(\.netWorth) == final.items.map(\.netWorth))
                #expect(later.asOf == final.asOf)

                for (index, player) in players.enumerated() {
                    let notices = try await client.decode(NotificationPageBody.self, "/api/notifications", token: player.token).items
                    let ended = notices.filter { $0.title == "League ended: Final" }
                    #expect(ended.count == 1)
                    #expect(ended.first?.body.hasPrefix("You finished #\(index + 1) of 4") == true, "\(ended)")
                    #expect(ended.first?.body.hasSuffix("with a net worth of \(["$10,950.00", "$10,750.00", "$10,550.00", "$10,250.00"][index]).") == true,
                            "\(ended.first?.body ?? "")")
                    let podium = try await client.achievements(token: player.token)["podium"]
                    #expect((podium?.earnedAt != nil) == (index < 3))
                }
                let history = try await client.decode(RankHistoryBody.self, "/api/leagues/\(league.id)/history?userId=\(players[1].user.id)", token: players[0].token)
                #expect(history.userId == players[1].user.id)
                #expect(history.items.map(\.rank) == [2])
                #expect(history.items.first?.netWorth == final.items[1].netWorth)
            }
            await pool.close()
        }
    }

    @Test("a league ranked by Sharpe ratio tells its members their final rank in that order, and the podium follows it")
    func finishingInTheLeaguesOrder() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 1000, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: Self.quietService()) { client in
                try await client.seedTradingMarket()
                let host = try await client.register("sharpe_host")
                let league = try await client.createLeague(
                    #"{"name":"Sharpe","mode":"isolated","ownerPlays":false,"rankBy":"sharpe","endsAt":"2099-01-01T00:00:00Z"}"#, token: host.token)
                // Four members with the same net worth (all cash) and Sharpe ratios that set them apart,
                // the last one's left undefined by a steady gain (ranked above every ratio).
                var members: [(name: String, id: Int, token: String)] = []
                for name in ["sharpe_low", "sharpe_mid", "sharpe_high", "sharpe_steady"] {
                    let member = try await client.register(name)
                    #expect(try await client.join(league.code, token: member.token).status == .ok)
                    members.append((name, member.user.id, member.token))
                }
                for (member, ratio) in zip(members, ["0.5", "1.0", "2.0", nil]) {
                    try await pool.execute(
                        """
                        INSERT INTO league_risk (league_id, user_id, days, sharpe, mean_return)
                        VALUES (\(league.id), \(member.id), 5, \(ratio.flatMap { Decimal(string: $0) })::numeric, 0.001)
                        """
                    )
                }
                try await pool.execute(
                    "UPDATE leagues SET starts_at = now() - interval '1 day', ends_at = now() - interval '1 second' WHERE id = \(league.id)"
                )
                #expect(try await store.finishEndedLeagues() == [league.id])
                let expected = ["sharpe_steady": 1, "sharpe_high": 2, "sharpe_mid": 3, "sharpe_low": 4]
                for member in members {
                    let notices = try await client.decode(NotificationPageBody.self, "/api/notifications", token: member.token).items
                    let ended = notices.first { $0.title == "League ended: Sharpe" }
                    #expect(ended?.body.hasPrefix("You finished #\(expected[member.name]!) of 4") == true, "\(member.name): \(String(describing: ended))")
                    let podium = try await client.achievements(token: member.token)["podium"]
                    #expect((podium?.earnedAt != nil) == (expected[member.name]! <= 3), "\(member.name)")
                }
                let board = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(league.id)/leaderboard", token: host.token)
                #expect(board.items.map(\.username) == ["sharpe_steady", "sharpe_high", "sharpe_mid", "sharpe_low"])
            }
            await pool.close()
        }
    }

    @Test("the running service finishes an ended league by itself, after start-up")
    func serviceRuns() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            try await TestApp.run(on: database, configure: { $0.standings.roundInterval = .milliseconds(100) }) { client in
                let owner = try await client.register("timekeeper")
                let league = try await client.createLeague(#"{"name":"Sprint","endsAt":"2099-01-01T00:00:00Z"}"#, token: owner.token)
                try await pool.execute(
                    "UPDATE leagues SET starts_at = now() - interval '1 day', ends_at = now() - interval '1 second' WHERE id = \(league.id)"
                )
                var titles: [String] = []
                for _ in 0..<100 where !titles.contains("League ended: Sprint") {
                    try await Task.sleep(for: .milliseconds(50))
                    titles = try await client.decode(NotificationPageBody.self, "/api/notifications", token: owner.token).items.map(\.title)
                }
                #expect(titles.filter { $0 == "League ended: Sprint" }.count == 1)
            }
            await pool.close()
        }
    }

    @Test("a big league is ranked from a snapshot the service refreshes; a small one live")
    func snapshots() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 2, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: Self.quietService(liveLimit: 2)) { client in
                try await client.seedTradingMarket()
                let owner = try await client.register("big_owner")
                let members = [try await client.register("big_one"), try await client.register("big_two")]
                let big = try await client.createLeague(#"{"name":"Big"}"#, token: owner.token)
                let small = try await client.createLeague(#"{"name":"Small"}"#, token: owner.token)
                for member in members { _ = try await client.join(big.code, token: member.token) }
                _ = try await client.join(small.code, token: members[0].token)
                _ = try await client.tradeOK("buy", "ONE", 1000, token: members[0].token)

                // No snapshot yet: ranked live rather than not at all.
                var board = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(big.id)/leaderboard", token: owner.token)
                #expect(board.total == 3)
                #expect(board.items.first?.username == "big_one")

                #expect(try await store.refreshSnapshots(maxAge: .zero) == [big.id])
                #expect(try await store.refreshSnapshots(maxAge: .seconds(3600)).isEmpty)
                // Nothing it ranks has changed: not refreshed however old, until it is older
                // than the age at which it is refreshed regardless.
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .seconds(3600)).isEmpty)
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .zero) == [big.id])
                // A trade anywhere, and a member joining, make it due again.
                _ = try await client.tradeOK("buy", "ONE", 1, token: owner.token)
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .seconds(3600)) == [big.id])
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .seconds(3600)).isEmpty)
                let late = try await client.register("big_late")
                _ = try await client.join(big.code, token: late.token)
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .seconds(3600)) == [big.id])
                try await client.setPrice("ONE", "20")
                board = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(big.id)/leaderboard", token: owner.token)
                #expect(board.items.first?.netWorth == "10350.00")  // the snapshot's price, 1.00
                let snapshotTime = board.asOf
                let live = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(small.id)/leaderboard", token: owner.token)
                #expect(live.items.first?.netWorth == "29350.00")  // the small league sees 20.00 at once

                // A price moved.
                #expect(try await store.refreshSnapshots(maxAge: .zero, unchangedAge: .seconds(3600)) == [big.id])
                board = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(big.id)/leaderboard", token: owner.token)
                #expect(board.items.first?.netWorth == "29350.00")
                #expect(board.asOf >= snapshotTime)
                // Pages of a snapshot follow its order.
                let second = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(big.id)/leaderboard?limit=1&offset=1", token: owner.token)
                #expect(second.items.map(\.rank) == [2])
                #expect(second.total == 4)

                // Finished: its final standings are kept (logged), its live snapshot dropped.
                try await pool.execute("UPDATE leagues SET ends_at = now() WHERE id = \(big.id)")
                #expect(try await store.finishEndedLeagues() == [big.id])
                let liveRows = try await pool.query(
                    """
                    SELECT (SELECT count(*) FROM league_live_standings WHERE league_id = \(big.id))
                         + (SELECT count(*) FROM league_live_snapshots WHERE league_id = \(big.id))
                    """
                ).decodeColumn(Int.self)
                #expect(liveRows == [0])
                let final = try await client.decode(TimedStandingPageBody.self, "/api/leagues/\(big.id)/leaderboard", token: owner.token)
                #expect(final.total == 4)
                #expect(final.items.first?.netWorth == "29350.00")
            }
            await pool.close()
        }
    }

    @Test("each running league records every member's rank once a day")
    func dailyHistory() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let store = StandingsStore(pool: pool, liveLimit: 1000, clock: MarketClock(hours: MarketHours(schedule: .always), now: { Date() }))
            try await TestApp.run(on: database, configure: Self.quietService()) { client in
                let owner = try await client.register("diarist")
                let member = try await client.register("diary_friend")
                let league = try await client.createLeague(#"{"name":"Diary"}"#, token: owner.token)
                _ = try await client.join(league.code, token: member.token)
                _ = try await client.createLeague(#"{"name":"Not yet","startsAt":"2099-01-01T00:00:00Z"}"#, token: owner.token)
                // The service's first round may record it before this call does (it runs at start-up,
                // which a loaded machine can delay past the joins); either way once, and only the
                // running league.
                #expect(try await store.recordDailyHistory() <= 1)
                #expect(try await store.recordDailyHistory() == 0)
                let recorded = try await pool.query("SELECT league_id, count(*) FROM league_rank_history GROUP BY league_id")
                    .decode((Int, Int).self)
                #expect(recorded.map(\.0) == [league.id] && recorded.map(\.1) == [2])
                let mine = try await client.decode(RankHistoryBody.self, "/api/leagues/\(league.id)/history", token: member.token)
                #expect(mine.userId == member.user.id)
                #expect(mine.items.count == 1)
                #expect(mine.items.first?.rank == 1)  // both have 10,250: a shared first place
                #expect(mine.items.first?.netWorth == "10250.00")
            }
            await pool.close()
        }
    }
}
