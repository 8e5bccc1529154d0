import Foundation
import Postgres
import Hummingbird

/// A player's or admin's role.
public enum Role: String, Codable, Sendable, PostgresCodable {
    case player, admin
}

/// A user as clients see it; never carries a password hash.
struct User: Codable, Sendable, Equatable {
    let id: Int
    let username: String
    let role: Role
    let createdAt: Date
}

/// `GET /api/me`: the user, and for a student of a class roster the name the host gave
/// them and the host who manages the account (both null for anyone else).
struct Me: ResponseEncodable {
    let id: Int
    let username: String
    let role: Role
    let createdAt: Date
    @NullEncoded var displayName: String?
    @NullEncoded var managedBy: Int?

    init(user: User, displayName: String?, managedBy: Int?) {
        id = user.id
        username = user.username
        role = user.role
        createdAt = user.createdAt
        self.displayName = displayName
        self.managedBy = managedBy
    }
}

/// Who made a request, established by `AuthMiddleware` from the bearer token.
public struct Identity: Sendable {
    public let userID: Int
    public let role: Role
}

/// A user with what only the server may see.
struct UserRecord: Sendable {
    let user: User
    let passwordHash: String
    let tokenVersion: Int
}

/// The answer to register, login and password change.
struct Session: ResponseEncodable {
    let user: User
    let token: String
    let expiresAt: Date
}

/// Username and password rules (openapi.yaml `RegisterRequest`).
public enum Credentials {
    public static func validateUsername(_ username: String, field: String = "username") throws {
        let allowed = username.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        guard allowed, (3...32).contains(username.utf8.count) else {
            throw InvalidInput("\(field) must be 3–32 characters of letters, digits, '_', '.' and '-'.")
        }
    }

    public static func validatePassword(_ password: String, field: String = "password") throws {
        try TextInput.check(password, field: field, length: 8...128, use: .privateToSender)
    }

    static func validateEmail(_ email: String?) throws {
        guard let email else { return }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        try TextInput.check(email, field: "email", length: 1...254, use: .privateToSender)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !email.contains(where: \.isWhitespace)
        else {
            throw InvalidInput("email must be an address like name@example.org.")
        }
    }
}

/// What account rules refuse.
enum AccountError: Error, Equatable {
    case usernameTaken
    /// A wrong username and a wrong password look the same.
    case wrongCredentials
    case tooManyFailedLogins(retryAfterSeconds: Int)
    case tooManyRegistrations(retryAfterSeconds: Int)
    case wrongCurrentPassword
    /// The password confirming an account's erasure is wrong.
    case wrongPassword
    /// The token's user no longer exists.
    case unknownUser
}
