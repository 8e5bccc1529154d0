import Foundation
import Hummingbird
import Synchronization

/// Requires a valid bearer token on the routes of its group, and records who is calling
/// in the request context.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let tokens: TokenService
    let versions: TokenVersionCache

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization],
            header.count > 7, header.prefix(7).lowercased() == "bearer "
        else {
            throw AppError.unauthorized()
        }
        guard let claims = await tokens.verify(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)),
            let userID = claims.userID,
            let state = try await versions.state(of: userID),
            state.version == claims.ver
        else {
            throw AppError.unauthorized("The token is invalid, expired or revoked; log in again.")
        }
        var context = context
        context.identity = Identity(userID: userID, role: state.role)
        context.logger[metadataKey: "user_id"] = .stringConvertible(userID)
        return try await next(request, context)
    }
}

/// Each user's token version and role, cached for `lifetime` so that most requests need
/// no database round trip. A token revoked by another server process keeps working here
/// for at most `lifetime`; revocations made through this process apply at once.
final class TokenVersionCache: Sendable {
    private struct Entry {
        let version: Int
        let role: Role
        let fetched: ContinuousClock.Instant
    }

    private let store: UserStore
    private let lifetime: Duration
    private let entries = Mutex<[Int: Entry]>([:])
    private static let maxEntries = 100_000

    init(store: UserStore, lifetime: Duration) {
        self.store = store
        self.lifetime = lifetime
    }

    func state(of userID: Int) async throws -> (version: Int, role: Role)? {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[userID] }), now - entry.fetched < lifetime {
            return (entry.version, entry.role)
        }
        guard let state = try await store.tokenState(id: userID) else {
            entries.withLock { _ = $0.removeValue(forKey: userID) }
            return nil
        }
        remember(userID: userID, version: state.version, role: state.role)
        return state
    }

    func remember(userID: Int, version: Int, role: Role) {
        entries.withLock { entries in
            if entries.count >= Self.maxEntries { entries.removeAll(keepingCapacity: true) }
            entries[userID] = Entry(version: version, role: role, fetched: .now)
        }
    }
}

extension AppRequestContext {
    /// The caller, for routes behind `AuthMiddleware`.
    func requireIdentity() throws -> Identity {
        guard let identity else { throw AppError.unauthorized() }
        return identity
    }
}
