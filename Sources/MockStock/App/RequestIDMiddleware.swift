import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

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

    /// 32 hex digits: this process's random half, then a count of the ids it made, so ids
    /// never repeat within a process and almost surely not across processes (a random
    /// half each request cost two system calls).
    static func generate() -> String {
        processHalf + hex(count.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    private static let processHalf = hex(UInt64.random(in: .min ... .max))
    private static let count = Atomic<UInt64>(0)

    private static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[index] = digits.utf8Start[Int(value >> (60 - 4 * UInt64(index)) & 0xF)]
            }
            return 16
        }
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
