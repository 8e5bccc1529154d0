import Foundation
import Hummingbird
import Postgres

/// A league as clients see it (openapi.yaml `League`); `members` only on its own page.
struct League: ResponseEncodable {
    let id: Int
    let name: String
    let code: String
    let ownerId: Int
    let mode: LeagueMode
    let startingCash: String
    /// The currency its league portfolios hold (USD unless an isolated league chose another).
    let currency: String
    let startsAt: Date
    @NullEncoded var endsAt: Date?
    @NullEncoded var maxMembers: Int?
    let memberCount: Int
    let createdAt: Date
    let rules: TradingRulesBody
    var members: [Standing]?

    init(record: LeagueStore.LeagueRecord, members: [Standing]? = nil) {
        id = record.id
        name = record.name
        code = record.code
        ownerId = record.ownerID
        mode = record.mode
        startingCash = record.startingCash.moneyString
        currency = record.rules.currency
        startsAt = record.startsAt
        endsAt = record.endsAt
        maxMembers = record.maxMembers
        memberCount = record.memberCount
        createdAt = record.createdAt
        rules = TradingRulesBody(record.rules)
        self.members = members
    }
}

/// A member's place (openapi.yaml `Standing`).
struct Standing: Encodable, Sendable {
    let rank: Int
    let userId: Int
    let username: String
    let netWorth: String
    let cash: String
    let holdingsValue: String
    let returnPercent: String

    init(_ record: StandingsStore.StandingRecord) {
        rank = record.rank
        userId = record.userID
        username = record.username
        netWorth = record.netWorth.moneyString
        cash = record.cash.moneyString
        holdingsValue = record.holdingsValue.moneyString
        returnPercent = record.paidIn > 0
            ? ((record.netWorth - record.paidIn) / record.paidIn * 100).rounded(2).moneyString : "0.00"
    }
}

struct StandingPage: ResponseEncodable {
    let items: [Standing]
    let total: Int
    /// When the prices and portfolios ranked were read (live: now; big leagues: their snapshot).
    let asOf: Date
}

/// A member's daily rank in a league.
struct RankHistory: ResponseEncodable {
    struct Point: Encodable {
        let day: String
        let rank: Int
        let netWorth: String
    }

    let userId: Int
    let items: [Point]
}

/// How a league's members play: with their personal portfolios (`shared`) or with a
/// league portfolio each, funded with the league's starting cash (`isolated`).
enum LeagueMode: String, Codable, Sendable, PostgresCodable {
    case shared, isolated
}

/// What joining found.
enum JoinOutcome: String, PostgresCodable {
    case ok, notFound = "not_found", banned, alreadyMember = "already_member", ended, full
}

/// What league rules refuse.
enum LeagueError: Error, Equatable {
    /// Not a league, or not one of the caller's: non-members learn nothing.
    case noSuchLeague
    case noLeagueWithCode
    case bannedFromLeague
    case alreadyMember
    case leagueEnded
    case leagueFull
    case ownerOnly(action: String)
    case noSuchMember
    case ownerCannotKickThemself
    /// Every join code tried was taken.
    case noFreeJoinCode
}
