import Foundation
import Hummingbird

/// A person's data: `GET /api/me/export`, `DELETE /api/me`, a host's erasure of a managed
/// student and an admin's erasure of an account.
struct PersonalDataController {
    let personalData: PersonalDataService
    let leagues: LeagueService
    /// Which proxies' forwarded client addresses to trust, for the password check's throttle.
    let proxies: TrustedProxies

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("me/export", use: export)
        api.delete("me", use: eraseOwn)
        api.delete("leagues/{id}/members/{userId}/account", use: eraseManaged)
        api.group("admin").add(middleware: AdminOnlyMiddleware()).delete("users/{id}", use: eraseByAdmin)
    }

    struct EraseRequest: Decodable {
        let password: String
    }

    @Sendable func export(_ request: Request, context: AppRequestContext) async throws -> Response {
        let userID = try context.requireIdentity().userID
        let document = try await personalData.export(userID: userID)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json", .contentDisposition: "attachment; filename=\"mockstock-account-\(userID).json\""],
            body: .init(byteBuffer: ByteBuffer(string: document))
        )
    }

    @Sendable func eraseOwn(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let body = try await request.decodeJSON(as: EraseRequest.self, context: context)
        try await personalData.eraseOwn(by: context.actor(), password: body.password, from: context.clientAddress(of: request, trusting: proxies))
        return .noContent
    }

    @Sendable func eraseManaged(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        let league = try await leagues.memberLeague(context)
        guard let target = context.parameters.get("userId").flatMap(Int.init) else { throw RosterError.notManaged }
        try await personalData.eraseManaged(target, in: league, by: context.actor())
        return .noContent
    }

    @Sendable func eraseByAdmin(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        guard let target = context.parameters.get("id").flatMap(Int.init) else { throw AdminError.noSuchUser }
        try await personalData.eraseByAdmin(target, by: context.actor())
        return .noContent
    }
}
