import Foundation
import Hummingbird

/// The league routes: creating, joining, leaving and running leagues.
struct LeagueController {
    let leagues: LeagueService
    let bots: BotService
    let gradebook: Gradebook
    let audit: AuditStore
    let reachable: ReachableAddresses

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("leagues/create", use: create)
        api.get("leagues", use: list)
        api.get("leagues/{id}", use: details)
        api.patch("leagues/{id}", use: update)
        api.get("leagues/{id}/leaderboard", use: leaderboard)
        api.get("leagues/{id}/history", use: history)
        api.get("leagues/{id}/report.csv", use: report)
        api.post("leagues/join/{code}", use: join)
        api.post("leagues/{id}/freeze", use: freeze)
        api.post("leagues/{id}/unfreeze", use: unfreeze)
        api.post("leagues/{id}/members/{userId}/reset", use: resetMember)
        api.post("leagues/{id}/reset", use: resetOwn)
        api.delete("leagues/leave/{id}", use: leave)
        api.delete("leagues/kick/{id}/{userId}", use: kick)
        api.delete("leagues/{id}", use: delete)
    }

    struct CreateRequest: Decodable {
        let name: String
        let mode: String?
        let startingCash: DecimalInput?
        let currency: String?
        let startsAt: Date?
        let endsAt: Date?
        let maxMembers: Int?
        let rules: TradingRulesInput?
        let bots: String?
        let joinUntil: Date?
        let ownerPlays: Bool?
        let resetsAllowed: Int?
        let journalRequired: Bool?
        let rankBy: String?
        let benchmark: String?
        let deleteManagedAfterDays: Int?
        let teams: Bool?
        /// A scenario league: a market of its own (docs/leagues.md, "Scenario leagues").
        var market: LeagueMarketRequest?
    }

    /// `POST /api/leagues/{id}/freeze`: an optional reason members are told.
    struct FreezeRequest: Decodable {
        let reason: String?
    }

    /// `PATCH /api/leagues/{id}`: what the owner may change after creation. `endsAt`,
    /// `joinUntil` and `maxMembers` may be `null` (none); any other field is refused, the
    /// trading rules among them, which stay as created.
    struct UpdateRequest: Decodable {
        static let fields: Set<String> = ["name", "bots", "endsAt", "joinUntil", "maxMembers", "journalRequired", "rankBy", "benchmark",
                                          "deleteManagedAfterDays"]
        let name: String?
        let bots: String?
        let journalRequired: Bool?
        let rankBy: String?
        let benchmark: String?
        let endsAt: PatchField<Date>
        let joinUntil: PatchField<Date>
        let maxMembers: PatchField<Int>
        let deleteManagedAfterDays: PatchField<Int>

        enum CodingKeys: String, CodingKey {
            case name, bots, endsAt, joinUntil, maxMembers, journalRequired, rankBy, benchmark, deleteManagedAfterDays
        }

        init(from decoder: any Decoder) throws {
            if let other = try decoder.container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue).sorted()
                .first(where: { !Self.fields.contains($0) }) {
                throw InvalidInput("\(other.prefix(40)) cannot be changed; a league's \(Self.fields.sorted().joined(separator: ", ")) can.")
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            bots = try container.decodeIfPresent(String.self, forKey: .bots)
            journalRequired = try container.decodeIfPresent(Bool.self, forKey: .journalRequired)
            rankBy = try container.decodeIfPresent(String.self, forKey: .rankBy)
            benchmark = try container.decodeIfPresent(String.self, forKey: .benchmark)
            endsAt = try PatchField(container, .endsAt)
            joinUntil = try PatchField(container, .joinUntil)
            maxMembers = try PatchField(container, .maxMembers)
            deleteManagedAfterDays = try PatchField(container, .deleteManagedAfterDays)
        }
    }

    /// `POST /api/leagues/join/{code}`: an empty body joins the caller; `botId` seats one
    /// of the caller's bots.
    struct JoinRequest: Decodable {
        let botId: Int?
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<League> {
        let identity = try context.requireIdentity()
        let body = try await request.decodeJSON(as: CreateRequest.self, context: context)
        let league = try await leagues.create(
            name: body.name, mode: body.mode, startingCash: body.startingCash?.value, currency: body.currency, startsAt: body.startsAt,
            endsAt: body.endsAt, maxMembers: body.maxMembers, rules: body.rules, bots: body.bots, joinUntil: body.joinUntil,
            ownerPlays: body.ownerPlays ?? true, resetsAllowed: body.resetsAllowed ?? 0, journalRequired: body.journalRequired ?? false,
            rankBy: body.rankBy, benchmark: body.benchmark, deleteManagedAfterDays: body.deleteManagedAfterDays,
            teams: body.teams ?? false, market: body.market, ownerID: identity.userID
        )
        return EditedResponse(status: .created, response: League(record: league))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [League] {
        try await leagues.leagues(member: context.requireIdentity().userID).map { League(record: $0) }
    }

    /// The league and its top 200; its host also gets the join links and each member's trades.
    @Sendable func details(_ request: Request, context: AppRequestContext) async throws -> League {
        let league = try await memberLeague(context)
        let page = try await leagues.standings(of: league, limit: 200, offset: 0)
        var members = page.items.map(Standing.init)
        guard league.ownerID == (try context.requireIdentity().userID) else { return League(record: league, members: members) }
        let activity = try await leagues.activity(of: league)
        for index in members.indices {
            guard let userID = members[index].userId else { continue }
            members[index].trades = activity[userID]?.trades ?? 0
            members[index].lastTradeAt = activity[userID]?.lastTradeAt
        }
        var details = League(record: league, members: members)
        details.joinLinks = reachable.joinLinks(code: league.code)
        if league.teams {
            details.students = try await leagues.teamSeats(leagueID: league.id).map { seat in
                League.Student(userId: seat.userID, username: seat.username, displayName: seat.displayName, teamId: seat.teamID,
                               role: seat.role, trades: activity[seat.userID]?.trades ?? 0, lastTradeAt: activity[seat.userID]?.lastTradeAt)
            }
        }
        return details
    }

    @Sendable func leaderboard(_ request: Request, context: AppRequestContext) async throws -> StandingPage {
        let league = try await memberLeague(context)
        let page = try Pagination(request.uri.queryParameters, defaultLimit: 50)
        let players = try request.uri.queryParameters.get("players").map { text in
            guard let players = StandingsStore.Players(rawValue: text) else { throw InvalidInput("players must be all, humans or bots.") }
            return players
        }
        let order = try RankBy.parse(request.uri.queryParameters.get("rankBy"))
        let standings = try await leagues.standings(of: league, players: players, order: order, limit: page.limit, offset: page.offset)
        return StandingPage(items: standings.items.map(Standing.init), total: standings.total, asOf: standings.asOf)
    }

    /// A member's daily rank history (`userId`, default the caller); the caller must be a member.
    @Sendable func history(_ request: Request, context: AppRequestContext) async throws -> RankHistory {
        let league = try await memberLeague(context)
        let userID = try request.positiveInteger("userId") ?? context.requireIdentity().userID
        let points = try await leagues.history(leagueID: league.id, userID: userID)
        return RankHistory(userId: userID, items: points.map { .init(day: $0.day, rank: $0.rank, netWorth: $0.netWorth.moneyString) })
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> League {
        let league = try await memberLeague(context)
        let body = try await request.decodeJSON(as: UpdateRequest.self, context: context)
        return League(record: try await leagues.update(
            league, name: body.name, bots: body.bots, endsAt: body.endsAt, joinUntil: body.joinUntil, maxMembers: body.maxMembers,
            journalRequired: body.journalRequired, rankBy: body.rankBy, benchmark: body.benchmark,
            deleteManagedAfterDays: body.deleteManagedAfterDays, by: context.actor()
        ))
    }

    @Sendable func freeze(_ request: Request, context: AppRequestContext) async throws -> League {
        let league = try await memberLeague(context)
        let body = try await request.decodeJSONIfPresent(as: FreezeRequest.self, context: context)
        return League(record: try await leagues.freeze(league, reason: body?.reason, by: context.actor()))
    }

    @Sendable func unfreeze(_ request: Request, context: AppRequestContext) async throws -> League {
        League(record: try await leagues.unfreeze(try await memberLeague(context), by: context.actor()))
    }

    @Sendable func resetMember(_ request: Request, context: AppRequestContext) async throws -> PortfolioReset {
        let league = try await memberLeague(context)
        guard let target = context.parameters.get("userId").flatMap(Int.init) else { throw LeagueError.noSuchMember }
        return PortfolioReset(try await leagues.reset(member: target, of: league, by: context.actor()))
    }

    @Sendable func resetOwn(_ request: Request, context: AppRequestContext) async throws -> PortfolioReset {
        PortfolioReset(try await leagues.resetOwn(try await memberLeague(context), userID: context.requireIdentity().userID))
    }

    /// The gradebook (the host's alone): one CSV row per member, in the league's order.
    @Sendable func report(_ request: Request, context: AppRequestContext) async throws -> Response {
        let league = try await memberLeague(context)
        let actor = try context.actor()
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "download the gradebook") }
        let csv = try await gradebook.csv(of: league)
        try await audit.record(actor.event(.leagueReportExport, league: league.id))
        return Response(
            status: .ok,
            headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"league-\(league.id)-gradebook.csv\""],
            body: .init(byteBuffer: ByteBuffer(string: csv))
        )
    }

    @Sendable func join(_ request: Request, context: AppRequestContext) async throws -> League {
        let identity = try context.requireIdentity()
        let body = try await request.decodeJSONIfPresent(as: JoinRequest.self, context: context)
        var player = identity.userID
        if let botID = body?.botId { player = try await bots.bot(id: botID, ownerID: identity.userID).id }
        return League(record: try await leagues.join(code: context.parameters.get("code") ?? "", userID: player))
    }

    /// Leaving; when the owner leaves, the league is deleted.
    @Sendable func leave(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await leagues.leave(try await memberLeague(context), by: context.actor())
        return .noContent
    }

    @Sendable func kick(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let league = try await memberLeague(context)
        guard let target = context.parameters.get("userId").flatMap(Int.init) else { throw LeagueError.noSuchMember }
        try await leagues.kick(target, from: league, by: context.actor())
        return .noContent
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await leagues.delete(try await memberLeague(context), by: context.actor())
        return .noContent
    }

    private func memberLeague(_ context: AppRequestContext) async throws -> LeagueStore.LeagueRecord {
        try await leagues.memberLeague(context)
    }
}

extension LeagueService {
    /// The `{id}` league of a route, if the caller plays in it or hosts it (`noSuchLeague`
    /// otherwise): what every league route's controller starts with.
    func memberLeague(_ context: AppRequestContext) async throws -> LeagueStore.LeagueRecord {
        guard let id = context.parameters.get("id").flatMap(Int.init) else { throw LeagueError.noSuchLeague }
        return try await league(id: id, member: try context.requireIdentity().userID)
    }
}
