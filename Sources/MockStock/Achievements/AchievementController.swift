import Foundation
import Hummingbird

/// The achievement catalog with the caller's progress.
struct AchievementController {
    let store: AchievementStore

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("achievements", use: list)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> [Achievement] {
        try await store.list(userID: context.requireIdentity().userID)
    }
}
