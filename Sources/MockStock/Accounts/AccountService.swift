import Foundation
import Logging

/// The rules of accounts: validation, hashing, throttling, tokens and their revocation.
public struct AccountService: Sendable {
    let users: UserStore
    let throttles: AccountThrottles
    let hasher: PasswordHasher
    let tokens: TokenService
    let versions: TokenVersionCache
    let startingCash: Decimal

    /// Registers a player; `address` is the client's, whose registrations are limited
    /// (nil for accounts the server creates itself).
    func register(username: String, password: String, email: String?, role: Role = .player, from address: String?) async throws -> Session {
        try Credentials.validateUsername(username)
        try Credentials.validatePassword(password)
        try Credentials.validateEmail(email)
        if let address { try await throttles.beginRegistration(address: address) }
        let hash = try await hasher.hash(password)
        let user = try await users.create(
            username: username, email: email, passwordHash: hash, role: role, startingCash: startingCash
        )
        return try await session(for: user, version: 0)
    }

    /// Wrong username and wrong password get the same answer after the same work. The
    /// attempt is counted before the password is checked (`AccountThrottles`).
    func login(username: String, password: String, from address: String) async throws -> Session {
        let check = throttles.passwordCheck(username: username, address: address)
        try await throttles.begin(check)
        // A name no account can have is not looked up and costs no key derivation.
        let possible = (try? Credentials.validateUsername(username)) != nil
        let record = possible ? try await users.find(username: username) : nil
        let matches: Bool
        // A bot has no password (an empty hash): it never logs in, after the same work.
        if let record, !record.passwordHash.isEmpty {
            matches = try await hasher.verify(password, against: record.passwordHash)
        } else {
            if possible { try await hasher.verifyAgainstNothing(password) }
            matches = false
        }
        guard let record, matches else { throw AccountError.wrongCredentials }
        try await throttles.succeeded(check)
        return try await session(for: record.user, version: record.tokenVersion)
    }

    func logout(userID: Int) async throws {
        let version = try await users.bumpTokenVersion(id: userID)
        if let record = try await users.find(id: userID) {
            versions.remember(userID: userID, version: version, role: record.user.role)
        }
    }

    /// Replaces the password, revokes every earlier token and returns a fresh one.
    /// A wrong current password counts like a failed login of the same username.
    func changePassword(userID: Int, current: String, new: String, from address: String) async throws -> Session {
        try Credentials.validatePassword(new, field: "newPassword")
        guard let record = try await users.find(id: userID) else { throw AccountError.unknownUser }
        let check = throttles.passwordCheck(username: record.user.username, address: address)
        try await throttles.begin(check)
        guard try await hasher.verify(current, against: record.passwordHash) else {
            throw AccountError.wrongCurrentPassword
        }
        try await throttles.succeeded(check)
        let version = try await users.changePassword(id: userID, passwordHash: try await hasher.hash(new))
        return try await session(for: record.user, version: version)
    }

    /// Checks the account's own password before an irreversible step (erasing it). A wrong
    /// one counts like a failed login of the same username.
    func confirmPassword(userID: Int, password: String, from address: String) async throws {
        guard let record = try await users.find(id: userID) else { throw AccountError.unknownUser }
        let check = throttles.passwordCheck(username: record.user.username, address: address)
        try await throttles.begin(check)
        guard !record.passwordHash.isEmpty, try await hasher.verify(password, against: record.passwordHash) else {
            throw AccountError.wrongPassword
        }
        try await throttles.succeeded(check)
    }

    /// What `ensureAdmin` did.
    public enum AdminOutcome: Equatable, Sendable {
        case created
        /// An existing user made an admin (or already one), password as it was.
        case promoted
        /// An existing user made an admin with the new password.
        case promotedWithNewPassword
    }

    /// Whether anyone can administer the market yet.
    public func hasAdmin() async throws -> Bool {
        try await users.hasAdmin()
    }

    /// Whether a user of that name exists (any case).
    public func userExists(username: String) async throws -> Bool {
        try await users.find(username: username) != nil
    }

    /// Creates the admin, or makes the existing user with that name an admin. An existing
    /// user's password changes only when `password` is given (the `ADMIN_PASSWORD` an
    /// operator configured is; `mockstock admin create` asks first); a new admin needs one.
    /// Running it again with the same values changes nothing. A bot's name is refused.
    @discardableResult
    public func ensureAdmin(username: String, password: String?, logger: Logger) async throws -> AdminOutcome {
        try Credentials.validateUsername(username)
        if let password { try Credentials.validatePassword(password) }
        if let existing = try await users.find(username: username) {
            var newHash: String?
            if let password, !(try await hasher.verify(password, against: existing.passwordHash)) {
                newHash = try await hasher.hash(password)
            }
            if newHash == nil && existing.user.role == .admin { return .promoted }
            guard try await users.promoteToAdmin(username: username, passwordHash: newHash) else { throw Self.botAsAdmin(username) }
            logger.notice("admin account updated", metadata: ["username": "\(existing.user.username)", "new-password": "\(newHash != nil)"])
            return newHash == nil ? .promoted : .promotedWithNewPassword
        }
        guard let password else { throw InvalidInput("A new admin needs a password.") }
        do {
            _ = try await register(username: username, password: password, email: nil, role: .admin, from: nil)
            logger.notice("admin account created", metadata: ["username": "\(username)"])
            return .created
        } catch AccountError.usernameTaken {
            // Another server created it a moment ago: make sure it is an admin.
            guard try await users.promoteToAdmin(username: username, passwordHash: try await hasher.hash(password)) else {
                throw Self.botAsAdmin(username)
            }
            return .promoted
        }
    }

    private static func botAsAdmin(_ username: String) -> InvalidInput {
        InvalidInput("\(username) is the name of a player's bot, which cannot be an admin: choose another admin username.")
    }

    private func session(for user: User, version: Int) async throws -> Session {
        versions.remember(userID: user.id, version: version, role: user.role)
        let (token, expiresAt) = try await tokens.issue(userID: user.id, version: version)
        return Session(user: user, token: token, expiresAt: expiresAt)
    }
}
