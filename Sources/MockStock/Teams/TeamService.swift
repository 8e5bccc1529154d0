import Foundation

/// The rules of teams: the host of a team league makes teams and moves members between
/// them; members see their league's teams.
struct TeamService: Sendable {
    let store: TeamStore

    func create(in league: LeagueStore.LeagueRecord, name rawName: String, by actor: Actor) async throws -> Team {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "make teams") }
        guard league.teams else { throw TeamError.notTeamLeague }
        let name = rawName.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(name, field: "name", length: 1...64)
        return try await store.create(leagueID: league.id, name: name, audit: actor.event(.leagueTeamCreate, league: league.id))
    }

    func setMember(_ userID: Int, team teamID: Int, role: TeamRole, in league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> Team {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "move members between teams") }
        guard league.teams else { throw TeamError.notTeamLeague }
        let audit = actor.event(.leagueTeamMember, league: league.id, target: userID, ["teamId": .number(teamID), "role": .text(role.rawValue)])
        guard let team = try await store.setMember(leagueID: league.id, teamID: teamID, userID: userID, role: role, audit: audit) else {
            throw try await store.teams(leagueID: league.id).contains { $0.id == teamID } ? LeagueError.noSuchMember : TeamError.noSuchTeam
        }
        return team
    }

    func removeMember(_ userID: Int, team teamID: Int, in league: LeagueStore.LeagueRecord, by actor: Actor) async throws -> Team {
        guard league.ownerID == actor.userID else { throw LeagueError.ownerOnly(action: "move members between teams") }
        guard league.teams else { throw TeamError.notTeamLeague }
        let audit = actor.event(.leagueTeamMember, league: league.id, target: userID, ["teamId": .number(teamID), "removed": .flag(true)])
        guard let team = try await store.removeMember(leagueID: league.id, teamID: teamID, userID: userID, audit: audit) else {
            throw try await store.teams(leagueID: league.id).contains { $0.id == teamID } ? LeagueError.noSuchMember : TeamError.noSuchTeam
        }
        return team
    }

    func teams(of league: LeagueStore.LeagueRecord) async throws -> [Team] {
        try await store.teams(leagueID: league.id)
    }
}
