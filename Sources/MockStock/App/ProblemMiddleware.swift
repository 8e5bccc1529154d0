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

/// Holds bodies to the route group's limit (bulk upload routes have larger ones): a
/// declared length over it is refused before reading, and a body sent without one
/// (chunked) is counted as it streams in and refused with `413` once it passes the limit.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    var maxBytes = AppRequestContext.maxBodySize

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init) {
            guard length <= maxBytes else { throw AppError.payloadTooLarge }
            return try await next(request, context)
        }
        var limited = request
        limited.body = RequestBody(asyncSequence: LimitedBody(base: request.body, maxBytes: maxBytes))
        return try await next(limited, context)
    }
}

/// A request body that throws `AppError.payloadTooLarge` once more than `maxBytes` arrived.
struct LimitedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let maxBytes: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        var remaining: Int

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            remaining -= chunk.readableBytes
            guard remaining >= 0 else { throw AppError.payloadTooLarge }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), remaining: maxBytes)
    }
}

/// For requests no route serves, the policies routes get from their groups: the default
/// body limit, and under `/api` the token check, so an unknown `/api` address is `401`
/// without a token (as every other is) and `404` with one.
struct UnmatchedRequestMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let auth: AuthMiddleware
    /// Under `/v2`: authenticated as the Alpaca-compatible API is, and answered in Alpaca's
    /// shape (a path that begins a route, such as `/v2/stocks/trades`, is matched by no route).
    let botAuth: BotAuthMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.endpointPath == nil else { return try await next(request, context) }
        let limited = BodyLimitMiddleware()
        let path = request.uri.path
        if path == "/v2" || path.hasPrefix("/v2/") {
            return try await AlpacaErrorMiddleware().handle(request, context: context) { request, context in
                try await botAuth.handle(request, context: context) { _, _ in throw AppError.notFound("endpoint not found") }
            }
        }
        guard path == "/api" || path.hasPrefix("/api/") else { return try await limited.handle(request, context: context, next: next) }
        return try await auth.handle(request, context: context) { request, context in
            try await limited.handle(request, context: context, next: next)
        }
    }
}
