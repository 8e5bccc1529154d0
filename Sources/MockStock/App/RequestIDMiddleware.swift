import Foundation
import HTTPTypes
import Hummingbird

/// Gives every request an id (the client's `X-Request-ID` if it is 1–128 visible ASCII
/// characters, else a new one), puts it in the log metadata and on every response.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let requestID = request.headers[.requestID].flatMap(Self.acceptable) ?? Self.generate()
        var context = context
        context.requestID = requestID
        context.logger[metadataKey: "request_id"] = .string(requestID)
        var response = try await next(request, context)
        response.headers[.requestID] = requestID
        return response
    }

    static func acceptable(_ value: String) -> String? {
        let ascii = value.utf8
        guard (1...128).contains(ascii.count), ascii.allSatisfy({ (0x21...0x7e).contains($0) }) else { return nil }
        return value
    }

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

/// API answers carry the caller's data and tokens: no cache may keep them, and no browser
/// may read them as anything but their declared type. Set on errors too.
struct APIResponseHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        let path = request.uri.path
        if path == "/api" || path.hasPrefix("/api/") {
            response.headers[.cacheControl] = "no-store"
            response.headers[.xContentTypeOptions] = "nosniff"
        }
        return response
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let requestID = HTTPField.Name("X-Request-ID")!
}
