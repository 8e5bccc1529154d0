import Foundation
import Hummingbird

/// A league as clients see it (API.md `League`); `members` only on its own page.
struct League: ResponseEncodable {
    let id: Int
    let name: String
    let code: String
    let ownerId: Int
    let mode: String
    let startingCash: String
    let startsAt: Date
    @NullEncoded var endsAt: Date?
    @NullEncoded var maxMembers: Int?
    let memberCount: Int
    let createdAt: Date
    var members: [Standing]?

    init(record: LeagueStore.LeagueRecord, members: [Standing]? = nil) {
        id = record.id
        name = record.name
        code = record.code
        ownerId = record.ownerID
        mode = record.mode
        startingCash = record.startingCash.moneyString
        startsAt = record.startsAt
        endsAt = record.endsAt
        maxMembers = record.maxMembers
        memberCount = record.memberCount
        createdAt = record.createdAt
        self.members = members
    }
}

/// A member's place (API.md `Standing`).
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

/// Creating, joining, leaving and running leagues.
struct LeagueController {
    let store: LeagueStore
    let standings: StandingsStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("leagues/create", use: create)
        api.get("leagues", use: list)
        api.get("leagues/{id}", use: details)
        api.get("leagues/{id}/leaderboard", use: leaderboard)
        api.get("leagues/{id}/history", use: history)
        api.post("leagues/join/{code}", use: join)
        api.delete("leagues/leave/{id}", use: leave)
        api.delete("leagues/kick/{id}/{userId}", use: kick)
        api.delete("leagues/{id}", use: delete)
    }

    struct CreateRequest: Decodable {
        let name: String
        let mode: String?
        let startingCash: DecimalInput?
        let startsAt: Date?
        let endsAt: Date?
        let maxMembers: Int?
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<League> {
        let identity = try context.requireIdentity()
        let body = try await request.decodeJSON(as: CreateRequest.self, context: context)
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(name.count) else { throw AppError.validationFailed("name must be 1–64 characters.") }
        let mode = body.mode ?? "shared"
        guard mode == "shared" || mode == "isolated" else { throw AppError.validationFailed("mode must be shared or isolated.") }
        let startingCash = body.startingCash?.value ?? Decimal(string: "100000.00")!
        guard startingCash > 0, startingCash <= 1_000_000_000 else {
            throw AppError.validationFailed("startingCash must be a positive amount up to 1000000000.")
        }
        let startsAt = body.startsAt ?? Date()
        if let endsAt = body.endsAt, endsAt <= startsAt {
            throw AppError.validationFailed("endsAt must be after startsAt.")
        }
        if let maxMembers = body.maxMembers, !(1...1_000_000).contains(maxMembers) {
            throw AppError.validationFailed("maxMembers must be from 1 to 1000000.")
        }
        let league = try await store.create(
            .init(name: name, mode: mode, startingCash: startingCash, startsAt: startsAt, endsAt: body.endsAt,
                  maxMembers: body.maxMembers),
            ownerID: identity.userID
        )
        return EditedResponse(status: .created, response: League(record: league))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [League] {
        try await store.leagues(member: context.requireIdentity().userID).map { League(record: $0) }
    }

    @Sendable func details(_ request: Request, context: AppRequestContext) async throws -> League {
        let league = try await memberLeague(context)
        let page = try await standings.page(of: league, limit: 200, offset: 0)
        return League(record: league, members: page.items.map(Standing.init))
    }

    @Sendable func leaderboard(_ request: Request, context: AppRequestContext) async throws -> StandingPage {
        let league = try await memberLeague(context)
        let page = try Pagination(request.uri.queryParameters, defaultLimit: 50)
        let standings = try await standings.page(of: league, limit: page.limit, offset: page.offset)
        return StandingPage(items: standings.items.map(Standing.init), total: standings.total, asOf: standings.asOf)
    }

    /// A member's daily rank history (`userId`, default the caller); the caller must be a member.
    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> RankHistory {
        let league = try await memberLeague(context)
        let userID = try request.positiveInteger("userId") ?? context.requireIdentity().userID
        let points = try await standings.history(leagueID: league.id, userID: userID)
        return RankHistory(userId: userID, items: points.map { .init(day: $0.day, rank: $0.rank, netWorth: $0.netWorth.moneyString) })
    }

    @Sendable func join(_ request: Request, context: AppRequestContext) async throws -> League {
        let identity = try context.requireIdentity()
        let code = context.parameters.get("code") ?? ""
        guard (8...64).contains(code.count) else { throw AppError.notFound("No league has that code.") }
        let (outcome, league) = try await store.join(code: code, userID: identity.userID)
        switch outcome {
        case .ok: return League(record: league!)
        case .notFound: throw AppError.notFound("No league has that code.")
        case .banned: throw AppError(.forbidden, code: "banned_from_league", detail: "You were removed from this league and cannot rejoin.")
        case .alreadyMember: throw AppError(.conflict, code: "already_member", detail: "You are already a member of this league.")
        case .ended: throw AppError.conflict("This league has ended.")
        case .full: throw AppError(.conflict, code: "league_full", detail: "This league is full.")
        }
    }

    /// Leaving; when the owner leaves, the league is deleted.
    @Sendable func leave(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let league = try await memberLeague(context)
        if league.ownerID == identity.userID {
            try await store.delete(leagueID: league.id)
        } else {
            _ = try await store.removeMember(leagueID: league.id, userID: identity.userID, ban: false)
        }
        return .noContent
    }

    @Sendable func kick(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let league = try await memberLeague(context)
        guard league.ownerID == identity.userID else { throw AppError.forbidden("Only the league's owner may kick members.") }
        guard let target = context.parameters.get("userId").flatMap(Int.init) else { throw AppError.notFound("No such member.") }
        guard target != identity.userID else { throw AppError.validationFailed("The owner cannot kick themself; leave or delete the league.") }
        guard try await store.removeMember(leagueID: league.id, userID: target, ban: true) else {
            throw AppError.notFound("No such member.")
        }
        return .noContent
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let league = try await memberLeague(context)
        guard league.ownerID == identity.userID else { throw AppError.forbidden("Only the league's owner may delete it.") }
        try await store.delete(leagueID: league.id)
        return .noContent
    }

    /// The `{id}` league if the caller is a member; 404 otherwise, so non-members learn nothing.
    private func memberLeague(_ context: AppRequestContext) async throws -> LeagueStore.LeagueRecord {
        let identity = try context.requireIdentity()
        guard let id = context.parameters.get("id").flatMap(Int.init),
            let league = try await store.league(id: id, member: identity.userID)
        else { throw AppError.notFound("No such league of yours.") }
        return league
    }
}
