import Foundation
import Hummingbird
import NIOCore

/// The per-request context every route receives.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's id: the client's `X-Request-ID` when acceptable, else a new one.
    public var requestID = ""
    /// The authenticated caller on `/api` routes; set by `AuthMiddleware`.
    public var identity: Identity?
    /// Under `/v2`, the portfolio the request trades: an API key's own, or (with a bearer
    /// token) nil for the caller's personal portfolio. Set by `BotAuthMiddleware`.
    public var botPortfolioID: Int?
    private let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The connection's peer: the client, or a proxy in front of it (see `TrustedProxies`).
    /// Read only by the routes that need it, not for every request.
    public var peerAddress: SocketAddress? { channel.remoteAddress }

    /// Largest request body accepted (1 MiB); larger ones get 413 `payload_too_large`.
    public static let maxBodySize = 1 << 20

    public var maxUploadSize: Int { Self.maxBodySize }

    /// JSON with RFC 3339 dates, written as it is encoded (`StreamingJSONEncoder`): fields
    /// in declaration order, dictionaries' keys sorted, so the same answer is always the
    /// same bytes.
    public var responseEncoder: JSONResponseEncoder { JSONResponseEncoder() }
}

/// Every answer's body: `StreamingJSONEncoder`'s JSON, with the headers Hummingbird's own
/// JSON encoder sets.
public struct JSONResponseEncoder: ResponseEncoder {
    var json = StreamingJSONEncoder()

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let bytes = try json.encode(value)
        var headers = HTTPFields()
        headers.reserveCapacity(4)
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(bytes.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
