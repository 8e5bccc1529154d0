import Foundation
import Hummingbird

/// `POST/GET/DELETE /api/bots`: a player's bots.
struct BotsController {
    let bots: BotService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("bots", use: create)
        api.get("bots", use: list)
        api.delete("bots/{id}", use: delete)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Bot> {
        let body = try await request.decodeJSON(as: CreateBotRequest.self, context: context)
        let bot = try await bots.create(ownerID: context.requireIdentity().userID, name: body.name)
        return EditedResponse(status: .created, response: bot)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [Bot] {
        try await bots.bots(ownerID: context.requireIdentity().userID)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        guard let id = context.parameters.get("id").flatMap(Int.init) else { throw BotError.noSuchBot }
        try await bots.delete(id: id, ownerID: context.requireIdentity().userID)
        return .noContent
    }
}
