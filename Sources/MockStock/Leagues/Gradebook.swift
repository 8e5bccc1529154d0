import Foundation
import Hummingbird

/// The gradebook: a league as a host downloads it (`GET /api/leagues/{id}/report.csv`),
/// one row per member in the league's order (`rankBy`), with the standing's figures and
/// what each member did: trades made and journal notes written in its portfolios since
/// they play there (`league_portfolios`, reset ones included), resets, and the last
/// trade's time.
///
/// A team league's has one row per student, `team` after `username`: the money columns and
/// rank are the team's, `trades`, `notes` and `lastTradeAt` the student's own (by who
/// placed them), so the teacher sees who pulls their weight; students on no team come last.
struct Gradebook: Sendable {
    static let header = "rank,username,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt"
    static let teamHeader = "rank,username,team,netWorth,returnPercent,sharpe,sortino,maxDrawdown,excessReturn,trades,notes,resets,lastTradeAt"

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
        let seats = league.teams ? try await leagues.teamSeats(leagueID: league.id) : []
        var lines = [league.teams ? Self.teamHeader : Self.header]
        func own(_ userID: Int) -> [String] {
            let done = activity[userID]
            return [String(done?.trades ?? 0), String(done?.notes ?? 0)]
        }
        func last(_ userID: Int) -> String { activity[userID]?.lastTradeAt.map(formatter.string) ?? "" }
        var offset = 0
        while true {
            let page = try await standings.page(of: league, players: .all, limit: 1000, offset: offset)
            for record in page.items {
                let standing = Standing(record)
                let figures = [standing.netWorth, standing.returnPercent, standing.sharpe ?? "", standing.sortino ?? "",
                               standing.maxDrawdown ?? "", standing.excessReturn ?? ""]
                if let team = record.team {
                    for seat in seats where seat.teamID == team.id {
                        lines.append(([String(standing.rank), Self.text(seat.username), Self.text(team.name)] + figures
                                      + own(seat.userID) + ["0", last(seat.userID)]).joined(separator: ","))
                    }
                } else {
                    lines.append(([String(standing.rank), Self.text(record.username)] + figures
                                  + own(record.userID) + [String(standing.resets), last(record.userID)]).joined(separator: ","))
                }
            }
            offset += page.items.count
            if page.items.isEmpty || offset >= page.total { break }
        }
        for seat in seats where seat.teamID == nil {
            lines.append((["", Self.text(seat.username), "", "", "", "", "", "", ""] + own(seat.userID) + ["0", last(seat.userID)])
                .joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A text cell as a spreadsheet shows it: one that would start a formula (`=`, `+`,
    /// `-`, `@`; a username may start with `-`) is prefixed with `'`, so the teacher sees
    /// the name and no formula runs. Usernames hold no commas or quotes; a team's name
    /// may, and is then quoted as CSV quotes.
    static func text(_ value: String) -> String {
        let cell = value.first.map { "=+-@".contains($0) } == true ? "'" + value : value
        guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
