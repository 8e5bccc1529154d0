import Foundation
import Hummingbird

/// `"market"` of a new league (`POST /api/leagues`), as sent: a replay of the stored
/// daily history from `from` to `to` on the league's own clock.
struct LeagueMarketRequest: Decodable, Sendable {
    let kind: String
    let from: String
    let to: String
    /// A league day passes every that many minutes from the league's start; null, only
    /// when the host advances it.
    var dayMinutes: Int?
    /// Aliases for the instruments, prices rebased to 100, and the period's dates hidden
    /// until the league ends.
    var blind: Bool?
}

/// The checked form of `LeagueMarketRequest`.
struct LeagueMarketSpec: Sendable, Equatable {
    let from: String
    let to: String
    let dayMinutes: Int?
    let blind: Bool

    /// At most this many trading days (about twelve years).
    static let maxDays = 3_000

    init(_ request: LeagueMarketRequest) throws {
        guard request.kind == "replay" else { throw InvalidInput("market.kind must be replay.") }
        guard CalendarDay.isValid(request.from), CalendarDay.isValid(request.to) else {
            throw InvalidInput("market.from and market.to must be days, YYYY-MM-DD.")
        }
        guard request.from < request.to else { throw InvalidInput("market.to must be after market.from.") }
        if let minutes = request.dayMinutes, !(1...1440).contains(minutes) {
            throw InvalidInput("market.dayMinutes must be from 1 to 1440, or null for days the host advances.")
        }
        from = request.from
        to = request.to
        dayMinutes = request.dayMinutes
        blind = request.blind ?? false
    }
}

/// What a league's own answer says of its market (`League.market`): the period's dates
/// only once revealed (not blind, or the league has ended).
struct LeagueMarketSummary: Sendable, Codable, Equatable {
    let kind: String
    let from: String?
    let to: String?
    let dayMinutes: Int?
    let blind: Bool
    let day: Int
    let days: Int
    /// Whether the league has ended (`league_ended`); not encoded (the answer's dates say it).
    let ended: Bool

    /// Encoded with every key, nulls included.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encode(dayMinutes, forKey: .dayMinutes)
        try container.encode(blind, forKey: .blind)
        try container.encode(day, forKey: .day)
        try container.encode(days, forKey: .days)
    }
}

/// `GET /api/leagues/{id}/market` (openapi.yaml `LeagueMarket`).
struct LeagueMarket: ResponseEncodable, Sendable {
    let kind: String
    /// The league day now, of `days`.
    let day: Int
    let days: Int
    let blind: Bool
    /// Whether the league has ended: everything is revealed then.
    let ended: Bool
    @NullEncoded var from: String?
    @NullEncoded var to: String?
    @NullEncoded var dayMinutes: Int?
    /// When the next league day starts on the league's clock (null: the host advances it,
    /// or the last day has come, or the league has ended).
    @NullEncoded var nextDayAt: Date?
    /// What holding every instrument of the league in equal amounts from day 1 has
    /// returned by today, in percent (scripted events included): the market members are
    /// measured against.
    let marketReturnPercent: String
    let symbols: [Instrument]
    /// Each member (a team league's teams), in the league's order (its first 200): their
    /// return against holding the market, `returnPercent` − `marketReturnPercent`.
    let againstMarket: [AgainstMarket]

    struct Instrument: Encodable, Sendable {
        let symbol: String
        let name: String
        @NullEncoded var price: String?
        /// The day-1 price, and the change since it in percent (`return_percent`).
        @NullEncoded var firstPrice: String?
        @NullEncoded var changePercent: String?
        @NullEncoded var realSymbol: String?
        @NullEncoded var realName: String?
    }
}

/// A member's (or team's) standing against the league's market.
struct AgainstMarket: Encodable, Sendable {
    let rank: Int
    /// The member; null on a team's row.
    @NullEncoded var userId: Int?
    @NullEncoded var username: String?
    @NullEncoded var displayName: String?
    var teamId: Int?
    var teamName: String?
    var members: [String]?
    let returnPercent: String
    /// `returnPercent` − the market's return since day 1, in points.
    let differencePercent: String

    init(_ record: StandingsStore.StandingRecord, market: Decimal) {
        let standing = Standing(record)
        rank = standing.rank
        userId = standing.userId
        username = standing.username
        displayName = standing.displayName
        teamId = standing.teamId
        teamName = standing.teamName
        members = standing.members
        returnPercent = standing.returnPercent
        differencePercent = (record.returnPercent - market).moneyString
    }
}

/// `POST /api/leagues/{id}/events`, as sent.
struct ScenarioEventRequest: Decodable, Sendable {
    let day: Int
    var symbols: [String]?
    let changePercent: DecimalInput
    let headline: String
    var body: String?
}

/// A scripted event (openapi.yaml `Event`).
struct ScenarioEvent: ResponseEncodable, Sendable {
    let id: Int
    let day: Int
    /// Its instruments as the league shows them; null: all of them.
    @NullEncoded var symbols: [String]?
    let changePercent: String
    let headline: String
    @NullEncoded var body: String?
    let applied: Bool
}

/// Why a scenario league's request is refused (mapped in `ProblemMapping`).
enum LeagueMarketError: Error, Equatable {
    /// The league trades the real market.
    case noMarket
    /// Its days pass on its clock (`dayMinutes`): the host does not advance them.
    case onClock
    /// The window's last day has come.
    case lastDay
    /// An event for a day the league has reached.
    case dayPassed(today: Int)
    /// An event beyond the window's last day.
    case beyondWindow(days: Int)
}
