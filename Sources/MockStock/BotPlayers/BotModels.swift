import Foundation
import Hummingbird

/// `POST /api/bots`: the bot's username, under the rules of every username.
struct CreateBotRequest: Decodable {
    let name: String
}

/// A bot player as its owner sees it (openapi.yaml `Bot`): its open portfolios, the
/// personal one first (`leagueId` null), then its league portfolios, each with its `kind`.
struct Bot: ResponseEncodable, Sendable {
    struct Portfolio: Encodable, Sendable {
        let id: Int
        @NullEncoded var leagueId: Int?
        let kind: PortfolioKind
    }

    let id: Int
    let username: String
    let ownerId: Int
    let createdAt: Date
    let portfolios: [Portfolio]
}

enum BotError: Error, Equatable {
    case tooManyBots(limit: Int)
    case noSuchBot
}

/// What a player may have of bots.
enum BotRules {
    /// Bots a player may own at once.
    static let maxPerOwner = 5
}
