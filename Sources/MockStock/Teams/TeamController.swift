import Foundation
import Hummingbird

/// A team league's teams: the host makes them and moves members; members list them.
struct TeamController {
    let teams: TeamService
    let leagues: LeagueService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("leagues/{id}/teams", use: create)
        api.get("leagues/{id}/teams", use: list)
        api.put("leagues/{id}/teams/{teamId}/members/{userId}", use: setMember)
        api.delete("leagues/{id}/teams/{teamId}/members/{userId}", use: removeMember)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Team> {
        let league = try await leagues.memberLeague(context)
        let body = try await request.decodeJSON(as: TeamRequest.self, context: context)
        return EditedResponse(status: .created, response: try await teams.create(in: league, name: body.name, by: context.actor()))
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [Team] {
        try await teams.teams(of: try await leagues.memberLeague(context))
    }

    @Sendable func setMember(_ request: Request, context: AppRequestContext) async throws -> Team {
        let league = try await leagues.memberLeague(context)
        let (teamID, userID) = try Self.ids(context)
        let body = try await request.decodeJSON(as: TeamMemberRequest.self, context: context)
        return try await teams.setMember(userID, team: teamID, role: body.role, in: league, by: context.actor())
    }

    @Sendable func removeMember(_ request: Request, context: AppRequestContext) async throws -> Team {
        let league = try await leagues.memberLeague(context)
        let (teamID, userID) = try Self.ids(context)
        return try await teams.removeMember(userID, team: teamID, in: league, by: context.actor())
    }

    private static func ids(_ context: AppRequestContext) throws -> (team: Int, user: Int) {
        guard let team = context.parameters.get("teamId").flatMap(Int.init) else { throw TeamError.noSuchTeam }
        guard let user = context.parameters.get("userId").flatMap(Int.init) else { throw LeagueError.noSuchMember }
        return (team, user)
    }

}
