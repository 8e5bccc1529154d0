import Foundation
import Hummingbird

/// Registration, login, logout, password change and the caller's own user.
struct AccountsController {
    let accounts: AccountService
    /// Whose `X-Forwarded-For` names the client whose attempts are counted.
    let proxies: TrustedProxies

    /// The routes open to callers without a token.
    func addPublicRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("auth/register", use: register)
        api.post("auth/login", use: login)
    }

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        api.post("auth/logout", use: logout)
        api.post("auth/password", use: changePassword)
        api.get("me", use: me)
    }

    struct RegisterRequest: Decodable {
        let username: String
        let password: String
        let email: String?
    }

    struct LoginRequest: Decodable {
        let username: String
        let password: String
    }

    struct PasswordChangeRequest: Decodable {
        let currentPassword: String
        let newPassword: String
    }

    @Sendable func register(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Session> {
        let body = try await request.decodeJSON(as: RegisterRequest.self, context: context)
        let session = try await accounts.register(
            username: body.username, password: body.password, email: body.email,
            from: context.clientAddress(of: request, trusting: proxies)
        )
        return EditedResponse(status: .created, response: session)
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Session {
        let body = try await request.decodeJSON(as: LoginRequest.self, context: context)
        return try await accounts.login(
            username: body.username, password: body.password, from: context.clientAddress(of: request, trusting: proxies)
        )
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> HTTPResponse.Status {
        try await accounts.logout(userID: context.requireIdentity().userID)
        return .noContent
    }

    @Sendable func changePassword(_ request: Request, context: AppRequestContext) async throws -> Session {
        let identity = try context.requireIdentity()
        let body = try await request.decodeJSON(as: PasswordChangeRequest.self, context: context)
        return try await accounts.changePassword(
            userID: identity.userID, current: body.currentPassword, new: body.newPassword,
            from: context.clientAddress(of: request, trusting: proxies)
        )
    }

    @Sendable func me(_ request: Request, context: AppRequestContext) async throws -> Me {
        guard let profile = try await accounts.users.profile(id: context.requireIdentity().userID) else {
            throw AccountError.unknownUser
        }
        return Me(user: profile.user, displayName: profile.displayName, managedBy: profile.managedBy)
    }
}

extension User: ResponseEncodable {}
