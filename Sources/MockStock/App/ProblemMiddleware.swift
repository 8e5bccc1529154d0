import Hummingbird
import Logging
import Postgres

/// Turns every error a route throws into a problem+json response (the table is
/// `AppError.problem(for:logger:)`). Database and unexpected errors are logged in full and
/// reach the client only as a code and a generic sentence.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let appError = AppError.problem(for: error, logger: context.logger)
            return appError.response(requestID: context.requestID)
        }
    }
}

/// Refuses bodies whose declared length is over the route group's limit before reading
/// them; bulk upload routes have larger limits of their own.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    var maxBytes = AppRequestContext.maxBodySize

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes {
            throw AppError.payloadTooLarge
        }
        return try await next(request, context)
    }
}

/// For requests no route serves, the policies routes get from their groups: the default
/// body limit, and under `/api` the token check, so an unknown `/api` address is `401`
/// without a token (as every other is) and `404` with one.
struct UnmatchedRequestMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let auth: AuthMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.endpointPath == nil else { return try await next(request, context) }
        let limited = BodyLimitMiddleware()
        let path = request.uri.path
        guard path == "/api" || path.hasPrefix("/api/") else { return try await limited.handle(request, context: context, next: next) }
        return try await auth.handle(request, context: context) { request, context in
            try await limited.handle(request, context: context, next: next)
        }
    }
}
