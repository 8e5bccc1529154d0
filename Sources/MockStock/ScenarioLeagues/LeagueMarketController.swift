import Foundation
import Hummingbird

/// A scenario league's market and scripted events: members read them, the host advances
/// the market and scripts events.
struct LeagueMarketController {
    let markets: LeagueMarketService
    let leagues: LeagueService

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.get("leagues/{id}/market", use: market)
        api.post("leagues/{id}/market/advance", use: advance)
        api.post("leagues/{id}/events", use: schedule)
        api.get("leagues/{id}/events", use: events)
    }

    struct AdvanceRequest: Decodable {
        var days: Int?
    }

    @Sendable func market(_ request: Request, context: AppRequestContext) async throws -> LeagueMarket {
        try await markets.market(of: try await leagues.memberLeague(context))
    }

    @Sendable func advance(_ request: Request, context: AppRequestContext) async throws -> LeagueMarket {
        let league = try await leagues.memberLeague(context)
        let body = try await request.decodeJSONIfPresent(as: AdvanceRequest.self, context: context)
        return try await markets.advance(league, days: body?.days, by: context.actor())
    }

    @Sendable func schedule(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<ScenarioEvent> {
        let league = try await leagues.memberLeague(context)
        let body = try await request.decodeJSON(as: ScenarioEventRequest.self, context: context)
        return EditedResponse(status: .created, response: try await markets.schedule(body, in: league, by: context.actor()))
    }

    @Sendable func events(_ request: Request, context: AppRequestContext) async throws -> [ScenarioEvent] {
        try await markets.events(of: try await leagues.memberLeague(context), userID: context.requireIdentity().userID)
    }
}
