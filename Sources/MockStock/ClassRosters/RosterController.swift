import Foundation
import Hummingbird

/// A host's class roster: creating the class's logins and resetting a student's password.
struct RosterController {
    let rosters: RosterService
    let leagues: LeagueService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("leagues/{id}/roster", use: create)
        api.post("leagues/{id}/members/{userId}/password", use: resetPassword)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Roster> {
        let league = try await leagues.memberLeague(context)
        let body = try await request.decodeJSON(as: RosterRequest.self, context: context)
        let students = try await rosters.create(displayNames: body.students.map(\.displayName), in: league, by: context.actor())
        return EditedResponse(status: .created, response: Roster(students: students))
    }

    @Sendable func resetPassword(_ request: Request, context: AppRequestContext) async throws -> NewPassword {
        let league = try await leagues.memberLeague(context)
        guard let target = context.parameters.get("userId").flatMap(Int.init) else { throw RosterError.notManaged }
        return NewPassword(password: try await rosters.resetPassword(of: target, in: league, by: context.actor()))
    }

}
