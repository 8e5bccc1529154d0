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

    /// JSON with sorted keys and RFC 3339 dates, so the same answer is always the same bytes.
    public var responseEncoder: JSONEncoder { Self.encoder }

    /// One encoder for every response: it is never changed after this, and encoding with
    /// it from several tasks at once is safe, so no request pays for making one.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
