import Foundation

/// The budgets that guard password checks and registrations, the two requests that
/// cost a key derivation each. A password check is counted against the username, the
/// client's address and the whole server *before* it runs, and given back when it
/// succeeds; so failed checks are what the budgets limit, and no burst gets more checks
/// than the limit. The counters live in PostgreSQL (`ThrottleStore`).
public struct AccountThrottles: Sendable {
    /// The limits (docs/SECURITY.md, "Settings"). Failed password checks are counted per minute,
    /// registrations per hour.
    public struct Settings: Sendable, Equatable {
        /// Failed checks of one username's password (`LOGIN_FAILURES_PER_USERNAME`).
        public var failuresPerUsername = 10
        /// Failed checks from one client address, over all usernames (`LOGIN_FAILURES_PER_ADDRESS`).
        public var failuresPerAddress = 50
        /// Failed checks over the whole server (`LOGIN_FAILURES_GLOBAL`).
        public var failuresOverall = 1000
        /// Accounts registered from one client address (`REGISTRATIONS_PER_ADDRESS`).
        public var registrationsPerAddress = 100
        public var failureWindow: Duration = .seconds(60)
        public var registrationWindow: Duration = .seconds(3600)

        public init() {}
    }

    let store: ThrottleStore
    let settings: Settings

    /// The budgets one password check is counted against.
    struct PasswordCheck: Sendable {
        let username: ThrottleStore.Budget
        let shared: [ThrottleStore.Budget]
    }

    func passwordCheck(username: String, address: String) -> PasswordCheck {
        // A hash keeps the key's size fixed whatever a client sends, and stores no guessed names.
        PasswordCheck(
            username: .init(key: "login:user:\(username.lowercased().sha256Hex)", limit: settings.failuresPerUsername, window: settings.failureWindow),
            shared: [
                .init(key: "login:addr:\(address)", limit: settings.failuresPerAddress, window: settings.failureWindow),
                .init(key: "login:all", limit: settings.failuresOverall, window: settings.failureWindow),
            ]
        )
    }

    /// Counts the check before it runs; throws `tooManyFailedLogins` when a budget is spent.
    func begin(_ check: PasswordCheck) async throws {
        if let seconds = try await store.spend([check.username] + check.shared) {
            throw AccountError.tooManyFailedLogins(retryAfterSeconds: seconds)
        }
    }

    /// The password was right: the check was no failure, and the username starts afresh.
    func succeeded(_ check: PasswordCheck) async throws {
        try await store.refund(check.shared, forgetting: [check.username])
    }

    /// Counts a registration before its key derivation; throws `tooManyRegistrations`.
    func beginRegistration(address: String) async throws {
        let budget = ThrottleStore.Budget(
            key: "register:addr:\(address)", limit: settings.registrationsPerAddress, window: settings.registrationWindow
        )
        if let seconds = try await store.spend([budget]) {
            throw AccountError.tooManyRegistrations(retryAfterSeconds: seconds)
        }
    }
}
