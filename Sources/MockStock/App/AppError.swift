import Foundation
import Hummingbird

/// An error a client may see, rendered as RFC 9457 problem details with a stable `code`.
public struct AppError: Error, Sendable, Equatable {
    public let status: HTTPResponse.Status
    /// A snake_case slug clients switch on (openapi.yaml `Problem`).
    public let code: String
    /// A sentence for people; never holds SQL, driver messages or secrets.
    public let detail: String
    public var headers: HTTPFields = [:]
    /// For uploads: the line of the file the error is about.
    public var line: Int?
    /// For `volume_cap`: how many shares could still fill.
    public var available: Int?

    public init(_ status: HTTPResponse.Status, code: String, detail: String) {
        self.status = status
        self.code = code
        self.detail = detail
    }

    public static func badRequest(_ detail: String) -> AppError {
        AppError(.badRequest, code: "bad_request", detail: detail)
    }

    public static func unauthorized(_ detail: String = "A valid bearer token is required.") -> AppError {
        AppError(.unauthorized, code: "unauthorized", detail: detail)
    }

    public static func forbidden(_ detail: String = "You are not allowed to do this.") -> AppError {
        AppError(.forbidden, code: "forbidden", detail: detail)
    }

    public static func notFound(_ detail: String = "Nothing exists at this address.") -> AppError {
        AppError(.notFound, code: "not_found", detail: detail)
    }

    public static func unknownSymbol(_ symbol: String) -> AppError {
        AppError(.notFound, code: "unknown_symbol", detail: "No instrument has the symbol \(Symbol.shown(symbol)).")
    }

    public static func quoteUnavailable(_ detail: String = "No current price can be had right now; try again shortly.") -> AppError {
        AppError(.serviceUnavailable, code: "quote_unavailable", detail: detail)
    }

    public static func conflict(_ detail: String) -> AppError {
        AppError(.conflict, code: "conflict", detail: detail)
    }

    public static func rateLimited(retryAfter seconds: Int, _ detail: String) -> AppError {
        var error = AppError(.tooManyRequests, code: "rate_limited", detail: detail)
        error.headers[.retryAfter] = String(seconds)
        return error
    }

    public static let payloadTooLarge = AppError(
        .contentTooLarge, code: "payload_too_large",
        detail: "The request body is larger than the 1 MiB this route accepts."
    )

    /// A WebSocket route asked for without the upgrade.
    public static func upgradeRequired(_ detail: String) -> AppError {
        var error = AppError(.init(code: 426, reasonPhrase: "Upgrade Required"), code: "upgrade_required", detail: detail)
        error.headers[.upgrade] = "websocket"
        return error
    }

    public static func serviceUnavailable(_ detail: String = "The service is temporarily unavailable; try again shortly.") -> AppError {
        AppError(.serviceUnavailable, code: "service_unavailable", detail: detail)
    }

    public static let internalError = AppError(
        .internalServerError, code: "internal_error", detail: "An unexpected error occurred; it has been logged."
    )

    /// The error a client sees for an HTTP-level failure raised by the framework.
    static func from(_ error: HTTPError) -> AppError {
        let code: String
        let detail: String
        switch error.status {
        case .badRequest: (code, detail) = ("bad_request", "The request could not be read: malformed JSON or query.")
        case .unauthorized: (code, detail) = ("unauthorized", "A valid bearer token is required.")
        case .forbidden: (code, detail) = ("forbidden", "You are not allowed to do this.")
        case .notFound: (code, detail) = ("not_found", "Nothing exists at this address.")
        case .methodNotAllowed: (code, detail) = ("method_not_allowed", "This address does not accept this method.")
        case .contentTooLarge: return .payloadTooLarge
        case .unsupportedMediaType: (code, detail) = ("unsupported_media_type", "The request body has an unsupported content type.")
        case .unprocessableContent: (code, detail) = ("validation_failed", "The request is well-formed but its values are not acceptable.")
        case .tooManyRequests: (code, detail) = ("rate_limited", "Too many requests; slow down.")
        case .serviceUnavailable: (code, detail) = ("service_unavailable", "The service is temporarily unavailable; try again shortly.")
        default:
            guard error.status.code >= 500 else {
                (code, detail) = ("bad_request", error.status.reasonPhrase)
                break
            }
            return .internalError
        }
        var appError = AppError(error.status, code: code, detail: detail)
        appError.headers = error.headers
        return appError
    }

    /// The problem+json response for this error.
    func response(requestID: String) -> Response {
        let problem = Problem(
            type: "urn:mockstock:problem:\(code)",
            title: status.reasonPhrase,
            status: status.code,
            detail: detail,
            code: code,
            requestId: requestID,
            line: line,
            available: available
        )
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(problem)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private struct Problem: Encodable {
        let type: String
        let title: String
        let status: Int
        let detail: String
        let code: String
        let requestId: String
        let line: Int?
        let available: Int?
    }
}
