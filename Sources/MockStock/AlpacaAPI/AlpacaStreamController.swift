import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket

/// `GET /stream`: Alpaca's trade-update stream as alpaca-py's `TradingStream` speaks it
/// (docs/ALPACA-SDK.md §4). JSON messages: the client authenticates with an API key first
/// and the reply is the first message it gets; then it listens to `trade_updates` and
/// receives an event for each change of an order of the key's portfolio (`new`, `fill`,
/// `canceled`, `expired`, `rejected`, `replaced`); every order's events start with `new`
/// (or `rejected`), even when it filled as it arrived, and a `fill` carries the position
/// after it (`position_qty`). Orders arrive through the live-update
/// stream's announcements and hub, like `/api/stream`'s, so each change reaches every
/// process once; this socket only shows them in Alpaca's shape.
struct AlpacaStreamController {
    let stream: StreamController
    let keys: ApiKeyService

    /// How often an open socket checks that its key was not revoked.
    static let keyRecheck: Duration = .seconds(5)
    static let tradeUpdates = "trade_updates"

    /// The same path without a WebSocket upgrade, on the main router: `426`.
    static func addPlainRoute(to router: RouterGroup<AppRequestContext>) {
        router.get("stream") { _, _ -> Response in
            throw AppError.upgradeRequired("GET /stream is Alpaca's trade-update WebSocket: connect with alpaca-py's TradingStream (see docs/bots.md).")
        }
    }

    func addRoutes(to router: Router<StreamRequestContext>) {
        router.ws("stream") { inbound, outbound, context in
            await serve(inbound, outbound, channel: context.requestContext.channel)
        }
    }

    private struct Request: Decodable {
        struct Payload: Decodable {
            let keyId: String?
            let secretKey: String?
            let streams: [String]?
        }

        let action: String
        let data: Payload?
    }

    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, channel: any Channel) async {
        var messages = inbound.messages(maxSize: StreamController.maxMessageSize).makeAsyncIterator()
        let deadline = Task {
            try await Task.sleep(for: StreamController.authenticationTimeout)
            await StreamController.cutOff(outbound, channel: channel, code: .policyViolation, reason: "Authenticate first.")
        }
        let first = try? await messages.next().flatMap(Self.request)
        let keyID = first?.data?.keyId ?? "", secret = first?.data?.secretKey ?? ""
        let holder = first?.action == "authenticate" ? try? await keys.holder(keyID: keyID, secret: secret) : nil
        deadline.cancel()
        guard let holder else {
            try? await outbound.write(.text(String(buffer: Self.authorization("unauthorized"))))
            try? await outbound.close(.policyViolation, reason: "unauthorized")
            return
        }
        guard await stream.ready(outbound, channel: channel) else { return }
        let portfolioID = holder.portfolioID
        // Keys are not tokens: a logout does not end the socket, the key's revocation does.
        let subscriber = stream.hub.connect(userID: holder.userID, tokenVersion: .max) { change in
            guard change.order.portfolioId == portfolioID else { return [] }
            return AlpacaTradeUpdate.events(change).map { AlpacaStreamMessage(stream: Self.tradeUpdates, data: $0).encoded }
        }
        defer { stream.hub.disconnect(subscriber) }
        _ = subscriber.enqueue(Self.authorization("authorized"))
        await stream.run(subscriber, &messages, outbound: outbound, channel: channel) { [keys] in
            await Self.stopWhenRevoked(subscriber, keyID: keyID, secret: secret, keys: keys)
        } handle: { message in
            _ = subscriber.enqueue(handle(message, from: subscriber))
        }
    }

    /// Stops a socket of Alpaca's protocols once its key is revoked (checked every
    /// `keyRecheck`): keys are not tokens, so a logout does not end it. Only a definite "no
    /// such key" ends the socket, not a database hiccup.
    static func stopWhenRevoked(_ subscriber: StreamSubscriber, keyID: String, secret: String, keys: ApiKeyService) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: keyRecheck)
            if case .some(.none) = try? await keys.holder(keyID: keyID, secret: secret) {
                subscriber.stop(.keyRevoked)
                return
            }
        }
    }

    /// Answers `listen` with the streams now followed; anything else with an error.
    private func handle(_ message: WebSocketMessage, from subscriber: StreamSubscriber) -> ByteBuffer {
        guard let request = Self.request(message) else {
            return Self.error("A message is a JSON object with an action (listen).")
        }
        switch request.action {
        case "listen":
            guard let streams = request.data?.streams, streams.count <= 10 else {
                return Self.error("listen needs data.streams, a list such as [\"trade_updates\"].")
            }
            let listening = streams.contains(Self.tradeUpdates)
            stream.hub.update(subscriber, to: StreamSubscriptions(orders: listening))
            return AlpacaStreamMessage(stream: "listening", data: AlpacaStreamStatus(streams: listening ? [Self.tradeUpdates] : [])).encoded
        case "authenticate":
            return Self.error("This socket is already authenticated.")
        default:
            return Self.error("Unknown action: this stream knows authenticate and listen.")
        }
    }

    /// A client message, text or binary.
    private static func request(_ message: WebSocketMessage) -> Request? {
        let bytes: Data = switch message {
        case .text(let text): Data(text.utf8)
        case .binary(let buffer): Data(buffer: buffer)
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try? decoder.decode(Request.self, from: bytes)
    }

    private static func authorization(_ status: String) -> ByteBuffer {
        AlpacaStreamMessage(stream: "authorization", data: AlpacaStreamStatus(action: "authenticate", status: status)).encoded
    }

    private static func error(_ message: String) -> ByteBuffer {
        AlpacaStreamMessage(stream: "listening", data: AlpacaStreamStatus(error: message)).encoded
    }
}
