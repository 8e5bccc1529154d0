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
    /// When the late-join window closes (null: when the league ends).
    @NullEncoded var joinUntil: Date?
    @NullEncoded var maxMembers: Int?
    let memberCount: Int
    let createdAt: Date
    let rules: TradingRulesBody
    /// Whether bots play: ranked with everyone, ranked apart, or not at all.
    let bots: BotPolicy
    /// False: the owner hosts without a seat (no league portfolio, never ranked).
    let ownerPlays: Bool
    /// Whether the host has frozen trading, and the reason members were told.
    let frozen: Bool
    @NullEncoded var frozenReason: String?
    /// How many times a member may reset their own league portfolio.
    let resetsAllowed: Int
    /// Whether every order and trade on its league portfolios needs a journal note.
    let journalRequired: Bool
    /// How its standings are ordered, and what excess returns are measured against.
    let rankBy: RankBy
    let benchmark: String
    /// How many days after the league ends its managed students are erased (null: kept).
    @NullEncoded var deleteManagedAfterDays: Int?
    /// A team league: members trade their team's portfolio, and the standings rank teams.
    let teams: Bool
    /// A scenario league's own market (null: the league trades the real market).
    @NullEncoded var market: LeagueMarketSummary?
    var members: [Standing]?
    /// For its host: the links to hand out (`ReachableAddresses`); empty when the server
    /// is reachable on this machine only.
    var joinLinks: [String]?
    /// For the host of a team league (whose standings rank teams): every member, with
    /// their team and role (null: on none) and their own trades.
    var students: [Student]?

    struct Student: Encodable, Sendable {
        let userId: Int
        let username: String
        @NullEncoded var displayName: String?
        @NullEncoded var teamId: Int?
        @NullEncoded var role: String?
        let trades: Int
        var lastTradeAt: Date?
    }

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
        joinUntil = record.joinUntil
        maxMembers = record.maxMembers
        memberCount = record.memberCount
        createdAt = record.createdAt
        rules = TradingRulesBody(record.rules)
        bots = record.bots
        ownerPlays = record.ownerPlays
        frozen = record.frozenAt != nil
        frozenReason = record.frozenReason
        resetsAllowed = record.resetsAllowed
        journalRequired = record.journalRequired
        rankBy = record.rankBy
        benchmark = Symbol.shown(record.benchmark)
        deleteManagedAfterDays = record.deleteManagedAfterDays
        teams = record.teams
        market = record.market
        self.members = members
    }
}

/// A member's place (openapi.yaml `Standing`).
struct Standing: Encodable, Sendable {
    let rank: Int
    /// The member; null on a team's row (a team league ranks teams).
    @NullEncoded var userId: Int?
    @NullEncoded var username: String?
    /// A team's row: the team, and its members' usernames.
    var teamId: Int?
    var teamName: String?
    var members: [String]?
    /// The name the host gave a student of a class roster; null for anyone else.
    @NullEncoded var displayName: String?
    /// For the league's host: the member's trades in the league, and the last one's time
    /// (absent when none), to see who has not traded yet.
    var trades: Int?
    var lastTradeAt: Date?
    let netWorth: String
    let cash: String
    let holdingsValue: String
    let returnPercent: String
    let bot: Bool
    /// A bot's owner; null for a human.
    @NullEncoded var ownerUsername: String?
    /// How many times the member's league portfolio was reset (by them or the host).
    let resets: Int
    /// Risk figures over the league's days against its benchmark (null until computed, or
    /// with fewer than two daily returns).
    @NullEncoded var sharpe: String?
    @NullEncoded var sortino: String?
    @NullEncoded var maxDrawdown: String?
    @NullEncoded var excessReturn: String?

    init(_ record: StandingsStore.StandingRecord) {
        rank = record.rank
        if let team = record.team {
            teamId = team.id
            teamName = team.name
            members = team.members
        } else {
            userId = record.userID
            username = record.username
        }
        displayName = record.displayName
        netWorth = record.netWorth.moneyString
        cash = record.cash.moneyString
        holdingsValue = record.holdingsValue.moneyString
        returnPercent = record.returnPercent.moneyString
        bot = record.bot
        ownerUsername = record.ownerUsername
        resets = record.resets
        sharpe = record.sharpe?.rate
        sortino = record.sortino?.rate
        maxDrawdown = record.maxDrawdown?.rate
        excessReturn = record.excessReturn?.rate
    }
}

struct StandingPage: ResponseEncodable {
    let items: [Standing]
    let total: Int
    /// When the prices and portfolios ranked were read (live: now; big leagues: their snapshot).
    let asOf: Date
}

/// A league portfolio reset: the member, their new league portfolio, the one archived
/// (null if they had none), and how many times theirs has been reset.
struct PortfolioReset: ResponseEncodable {
    let userId: Int
    let portfolioId: Int
    @NullEncoded var previousPortfolioId: Int?
    let resets: Int

    init(_ reset: LeagueStore.Reset) {
        userId = reset.userID
        portfolioId = reset.portfolioID
        previousPortfolioId = reset.previousPortfolioID
        resets = reset.resets
    }
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

/// A league's bot policy: bots ranked with everyone (`allowed`), ranked apart
/// (`separate`: the leaderboard shows humans unless asked for bots), or kept out
/// (`forbidden`: no bot joins, and no API key trades a portfolio of the league).
enum BotPolicy: String, Codable, Sendable, PostgresCodable {
    case allowed, separate, forbidden

    static func parse(_ text: String?) throws -> BotPolicy? {
        guard let text else { return nil }
        guard let policy = BotPolicy(rawValue: text) else { throw InvalidInput("bots must be allowed, separate or forbidden.") }
        return policy
    }

    /// Whom the leaderboard ranks unless asked.
    var defaultPlayers: StandingsStore.Players { self == .separate ? .humans : .all }
}

/// What joining found.
enum JoinOutcome: String, PostgresCodable {
    case ok, notFound = "not_found", banned, alreadyMember = "already_member", ended, full, botsForbidden = "bots_forbidden", joinClosed = "join_closed"
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
    /// The league's bot policy is `forbidden`.
    case botsForbidden
    /// Its late-join window has closed.
    case joinClosed
    /// A member's own reset beyond what the league allows.
    case noResetsLeft(allowed: Int)
    /// A shared league has no league portfolios to freeze or reset.
    case sharedLeague
    /// The host of a league they do not play in asked for a player's action (their own reset).
    case notPlaying
    /// A team league's portfolios are its teams': no member's is reset.
    case teamLeague
}
