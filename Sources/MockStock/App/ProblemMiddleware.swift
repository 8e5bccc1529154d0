import Hummingbird
import Logging
import Postgres

/// Turns every error a route throws into a problem+json response. Database and
/// unexpected errors are logged in full and reach the client only as a code and a
/// generic sentence.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let appError = Self.appError(for: error, logger: context.logger)
            return appError.response(requestID: context.requestID)
        }
    }

    static func appError(for error: any Error, logger: Logger) -> AppError {
        switch error {
        case let error as AppError:
            return error
        case let error as HTTPError:
            return AppError.from(error)
        case let error as PostgresError where error.isConnectionFailure || error.isTransient || error.code == .queryCanceled:
            logger.warning("database unavailable", metadata: ["error": "\(error.logDescription)"])
            return .serviceUnavailable()
        case let error as PostgresError where error.kind == .encoding || error.code == .characterNotInRepertoire:
            // Text PostgreSQL cannot store (a NUL character): the client's input, not our fault.
            return .validationFailed("Text values may not contain NUL characters.")
        case let error as PostgresError:
            logger.error("database error", metadata: ["error": "\(error.logDescription)"])
            return .internalError
        case is DecodingError:
            return .badRequest("The request body is not valid JSON of the expected shape.")
        case is CancellationError:
            return .serviceUnavailable()
        default:
            logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalError
        }
    }
}

/// Refuses bodies whose declared length is over the limit before reading them; bulk
/// upload routes may have larger limits of their own.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let maxBytes: Int
    /// Larger limits by route pattern, e.g. `["/api/admin/prices": 1 << 30]`.
    var routeLimits: [String: Int] = [:]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let limit = context.endpointPath.flatMap { routeLimits[$0] } ?? maxBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw AppError.payloadTooLarge
        }
        return try await next(request, context)
    }
}
