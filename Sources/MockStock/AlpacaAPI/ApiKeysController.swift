import Foundation
import Hummingbird

/// `POST/GET/DELETE /api/api-keys`: a player's keys for bots.
struct ApiKeysController {
    let keys: ApiKeyService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("api-keys", use: create)
        api.get("api-keys", use: list)
        api.delete("api-keys/{keyId}", use: revoke)
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<CreatedApiKey> {
        let body = try await request.decodeJSON(as: ApiKeyRequest.self, context: context)
        let key = try await keys.create(userID: context.requireIdentity().userID, body)
        return EditedResponse(status: .created, response: key)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [ApiKey] {
        try await keys.keys(userID: context.requireIdentity().userID)
    }

    @Sendable func revoke(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await keys.revoke(userID: context.requireIdentity().userID, keyID: context.parameters.get("keyId") ?? "")
        return .noContent
    }
}
