import Foundation
import Hummingbird

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
        guard let (identity, _, _) = try await identity(token: String(header.dropFirst(7)).trimmingWhitespace) else {
            throw AppError.unauthorized("The token is invalid, expired or revoked; log in again.")
        }
        var context = context
        context.identity = identity
        context.logger[metadataKey: "user_id"] = .stringConvertible(identity.userID)
        return try await next(request, context)
    }

    /// Who holds the token, its version (see `isCurrent`) and when it expires; nil when it
    /// is invalid, expired or revoked.
    func identity(token: String) async throws -> (Identity, version: Int, expiresAt: Date)? {
        guard let claims = await tokens.verify(token),
            let userID = claims.userID,
            let state = try await versions.state(of: userID, presented: claims.ver),
            state.version == claims.ver
        else { return nil }
        return (Identity(userID: userID, role: state.role), state.version, claims.exp.value)
    }

    /// Whether tokens of this version are still valid for the user (no logout or password
    /// change since they were issued).
    func isCurrent(userID: Int, version: Int) async throws -> Bool {
        try await versions.state(of: userID)?.version == version
    }
}

/// Each user's token version and role, cached for `lifetime` so that most requests need
/// no database round trip. A token revoked by another server process keeps working here
/// for at most `lifetime`; revocations made through this process apply at once. A token
/// newer than the cached version (issued by another process after a logout there) is
/// checked against the database at once: versions only grow, so the cache is behind.
final class TokenVersionCache: Sendable {
    private struct State {
        let version: Int
        let role: Role
    }

    private let store: UserStore
    private let cache: ExpiringCache<Int, State>

    init(store: UserStore, lifetime: Duration, clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.store = store
        cache = ExpiringCache(lifetime: lifetime, capacity: 100_000, clock: clock)
    }

    /// `presented`: the version of the token being checked, if any.
    func state(of userID: Int, presented: Int? = nil) async throws -> (version: Int, role: Role)? {
        if let state = cache.value(for: userID), (presented ?? state.version) <= state.version {
            return (state.version, state.role)
        }
        let read = cache.now
        var state = try await store.tokenState(id: userID)
        // A replica may not yet have a login or logout made on another server a moment
        // ago, nor a new user: what it does not know is asked of the primary.
        if state.map({ (presented ?? $0.version) > $0.version }) ?? true {
            state = try await store.currentTokenState(id: userID)
        }
        guard let state else {
            cache.removeValue(for: userID)
            return nil
        }
        cache.store(State(version: state.version, role: state.role), for: userID, at: read)
        return state
    }

    /// Forgets what this process knew of the user's tokens (revoked on another process, or
    /// the account erased): the next request reads the version afresh.
    func forget(userID: Int) {
        cache.removeValue(for: userID)
    }

    func remember(userID: Int, version: Int, role: Role) {
        cache.store(State(version: version, role: role), for: userID)
    }
}

extension AppRequestContext {
    /// The caller, for routes behind `AuthMiddleware`.
    func requireIdentity() throws -> Identity {
        guard let identity else { throw AppError.unauthorized() }
        return identity
    }
}
