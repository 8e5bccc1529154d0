import Foundation
import Hummingbird

/// `POST /api/api-keys`: whose key it is (nil: the caller's; else one of the caller's
/// bots), which of their portfolios it trades (nil: the personal one) and a name to tell
/// keys apart.
struct ApiKeyRequest: Decodable {
    let portfolioId: Int?
    let name: String?
    let botId: Int?
}

/// A new key, with the only copy of its secret the server ever gives out.
struct CreatedApiKey: ResponseEncodable, Sendable {
    let keyId: String
    let secret: String
    let portfolioId: Int
    /// The bot it acts as; null for the caller's own key.
    @NullEncoded var botId: Int?
    let name: String
    let createdAt: Date
}

/// A key as listed: never its secret.
struct ApiKey: ResponseEncodable, Sendable {
    let keyId: String
    let portfolioId: Int
    @NullEncoded var botId: Int?
    let name: String
    let createdAt: Date
    @NullEncoded var lastUsedAt: Date?
}

enum ApiKeyError: Error, Equatable {
    case tooManyKeys(limit: Int)
    case noSuchKey
    /// A league the portfolio plays in forbids bots (`api_keys_forbidden`).
    case botsForbidden
}

/// Key ids and secrets in the shape Alpaca gives them: `PK` and 18 capitals or digits;
/// 40 letters and digits. Both come from the system's secure random source.
enum ApiKeyFormat {
    static let maxKeysPerUser = 10
    private static let idAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    private static let secretAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    static func newKeyID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "PK" + String((0..<18).map { _ in idAlphabet.randomElement(using: &generator)! })
    }

    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<40).map { _ in secretAlphabet.randomElement(using: &generator)! })
    }

    static func isKeyID(_ text: String) -> Bool {
        text.count == 20 && text.hasPrefix("PK") && text.utf8.dropFirst(2).allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) }
    }
}
