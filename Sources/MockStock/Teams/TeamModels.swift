import Foundation
import Hummingbird
import Postgres

/// What a member of a team does: traders trade its portfolio, viewers watch it.
enum TeamRole: String, Codable, Sendable, PostgresCodable {
    case trader, viewer
}

/// A team as clients see it (openapi.yaml `Team`).
struct Team: ResponseEncodable, Sendable {
    struct Member: Encodable, Sendable {
        let userId: Int
        let username: String
        let role: TeamRole
    }

    let id: Int
    let name: String
    /// The team's one league portfolio, which its traders trade.
    let portfolioId: Int
    let members: [Member]
}

/// `POST /api/leagues/{id}/teams`.
struct TeamRequest: Decodable {
    let name: String
}

/// `PUT /api/leagues/{id}/teams/{teamId}/members/{userId}`.
struct TeamMemberRequest: Decodable {
    let role: TeamRole
}

enum TeamError: Error, Equatable {
    case noSuchTeam
    /// Teams belong to a league created with `"teams": true`.
    case notTeamLeague
    case nameTaken
}
