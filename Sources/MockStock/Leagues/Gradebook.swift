import Foundation
import Hummingbird

/// The gradebook: a league as a host downloads it (`GET /api/leagues/{id}/report.csv`),
/// one row per member in the league's order (`rankBy`), with the standing's figures and
/// what each member did: trades made and journal notes written in its portfolios since
/// they play there (`league_portfolios`, reset ones included), resets, and the last
/// trade's time.
struct Gradebook: Sendable {
    static let header = "rank,username,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt"

    let leagues: LeagueStore
    let standings: StandingsStore

    struct Activity: Sendable {
        let trades: Int
        let notes: Int
        let lastTradeAt: Date?
    }

    func csv(of league: LeagueStore.LeagueRecord) async throws -> String {
        let activity = try await leagues.activity(of: league)
        let formatter = ISO8601DateFormatter()
        var lines = [Self.header]
        var offset = 0
        while true {
            let page = try await standings.page(of: league, players: .all, limit: 1000, offset: offset)
            for record in page.items {
                let standing = Standing(record)
                let done = activity[record.userID]
                lines.append([
                    String(standing.rank), Self.text(standing.username), standing.netWorth, standing.returnPercent,
                    standing.sharpe ?? "", standing.sortino ?? "", standing.maxDrawdown ?? "", standing.excessReturn ?? "",
                    String(done?.trades ?? 0), String(done?.notes ?? 0), String(standing.resets),
                    done?.lastTradeAt.map(formatter.string) ?? "",
                ].joined(separator: ","))
            }
            offset += page.items.count
            if page.items.isEmpty || offset >= page.total { break }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A text cell as a spreadsheet shows it: one that would start a formula (`=`, `+`,
    /// `-`, `@`; a username may start with `-`) is prefixed with `'`, so the teacher sees
    /// the name and no formula runs. Usernames hold no commas or quotes.
    static func text(_ value: String) -> String {
        guard let first = value.first, "=+-@".contains(first) else { return value }
        return "'" + value
    }
}
