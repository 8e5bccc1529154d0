import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket

/// The context of a stream upgrade request: the socket's channel, to cut off a client
/// that stopped reading.
struct StreamRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<StreamRequestContext>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

/// `GET /api/stream`: one WebSocket per client. The first message authenticates (the
/// token never appears in a URL, so never in a log); then the client subscribes and
/// receives a snapshot followed by events.
struct StreamController {
    let hub: StreamHub
    let feed: StreamFeed
    let auth: AuthMiddleware
    let leagues: LeagueService
    let logger: Logger

    /// How long a new socket has to authenticate.
    static let authenticationTimeout: Duration = .seconds(10)
    /// The largest message a client may send.
    static let maxMessageSize = 16_384
    static let slowConsumerCode = WebSocketErrorCode.unknown(1013)

    /// The same path without a WebSocket upgrade, on the main router: `426`.
    func addPlainRoute(to api: RouterGroup<AppRequestContext>) {
        api.get("stream") { _, _ -> Response in
            throw AppError.upgradeRequired("GET /api/stream is a WebSocket: connect with a WebSocket client (see docs/live-updates.md).")
        }
    }

    func router() -> Router<StreamRequestContext> {
        let router = Router(context: StreamRequestContext.self)
        router.ws("api/stream") { inbound, outbound, context in
            await serve(inbound, outbound, channel: context.requestContext.channel)
        }
        return router
    }

    private func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, channel: any Channel) async {
        var messages = inbound.messages(maxSize: Self.maxMessageSize).makeAsyncIterator()
        let deadline = Task {
            try await Task.sleep(for: Self.authenticationTimeout)
            await Self.cutOff(outbound, channel: channel, code: .policyViolation, reason: "Authenticate first.")
        }
        let holder = await authenticate(&messages)
        deadline.cancel()
        guard let (identity, version, expiresAt) = holder else {
            try? await outbound.close(.policyViolation, reason: "A valid, unexpired token is required.")
            return
        }
        // What a process still starting would miss is what a snapshot must not.
        guard await ready(outbound, channel: channel) else { return }
        let subscriber = hub.connect(userID: identity.userID, tokenVersion: version)
        defer { hub.disconnect(subscriber) }
        _ = subscriber.enqueue(StreamEncoding.authorized)
        await run(subscriber, &messages, outbound: outbound, channel: channel) {
            // The token's end is the socket's end: its holder must log in again.
            try? await Task.sleep(for: .seconds(max(expiresAt.timeIntervalSinceNow, 0)))
            if !Task.isCancelled { subscriber.stop(.tokenExpired) }
        } handle: { message in
            await handle(message, from: subscriber)
        }
    }

    /// Waits until this process listens for announcements (right after start-up it may not
    /// yet); false, with the socket cut off, when that takes too long.
    func ready(_ outbound: WebSocketOutboundWriter, channel: any Channel) async -> Bool {
        guard await Self.within(Self.authenticationTimeout, { await feed.listening.wait() }) else {
            await Self.cutOff(outbound, channel: channel, code: Self.slowConsumerCode, reason: "Not ready yet; try again shortly.")
            return false
        }
        return true
    }

    /// An authenticated socket until it closes: `watch` (which stops the subscriber when
    /// its credentials lapse), the writer, the cut-off when the subscriber is stopped, and
    /// each client message through `handle`. Serves `/api/stream` and `/stream` alike.
    func run(
        _ subscriber: StreamSubscriber, _ messages: inout WebSocketInboundMessageStream.AsyncIterator,
        outbound: WebSocketOutboundWriter, channel: any Channel,
        watch: @escaping @Sendable () async -> Void, handle: (WebSocketMessage) async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask(operation: watch)
            Self.attachWriter(subscriber, to: channel, metrics: hub.metrics)
            group.addTask {
                for await reason in subscriber.stops {
                    await Self.cutOff(outbound, channel: channel, code: Self.closeCode(reason), reason: Self.closeReason(reason))
                    return
                }
            }
            do {
                while let message = try await messages.next() {
                    await handle(message)
                }
            } catch {
                // The client sent something that is not a WebSocket message we accept; the socket closes.
            }
            group.cancelAll()
        }
    }

    /// Whether `work` finished within `limit`.
    private static func within(_ limit: Duration, _ work: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await work()
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Sends a close frame, giving a client that stopped reading a moment to take it, then
    /// closes the connection.
    static func cutOff(_ outbound: WebSocketOutboundWriter, channel: any Channel, code: WebSocketErrorCode, reason: String) async {
        _ = await within(.seconds(2)) { try? await outbound.close(code, reason: reason) }
        channel.close(promise: nil)
    }

    private static func closeCode(_ reason: StreamSubscriber.StopReason) -> WebSocketErrorCode {
        switch reason {
        case .slowConsumer: slowConsumerCode
        case .tokenExpired, .tokenRevoked, .keyRevoked: .policyViolation
        }
    }

    private static func closeReason(_ reason: StreamSubscriber.StopReason) -> String {
        switch reason {
        case .slowConsumer: "Too slow: events were arriving faster than they were read."
        case .tokenExpired: "The token expired."
        case .tokenRevoked: "The token was revoked (a logout or password change)."
        case .keyRevoked: "The API key was revoked."
        }
    }

    private func authenticate(
        _ messages: inout WebSocketInboundMessageStream.AsyncIterator
    ) async -> (Identity, version: Int, expiresAt: Date)? {
        guard case .text(let text)? = try? await messages.next(),
            let request = try? JSONDecoder().decode(StreamRequest.self, from: Data(text.utf8)),
            request.action == .auth, let token = request.token
        else { return nil }
        return try? await auth.identity(token: token) ?? nil
    }

    /// Sends the subscriber's events as they come, from the channel's event loop: each
    /// batch framed into one buffer (`StreamEncoding.frames`) and written below the
    /// WebSocket frame encoder with one flush; when the client has taken the bytes, the
    /// next batch (everything queued meanwhile). Waiting for the write is the backpressure.
    /// At 5,000 sockets × 20 symbols (`make bench-stream`) a write and flush per frame
    /// through the WebSocket writer took the tick-to-client p99 to 1.2 s; frames written
    /// together, to 250–390 ms; driving the writes from the event loop rather than from a
    /// task per socket (three thread hops per batch) cut the servers' CPU further.
    static func attachWriter(_ subscriber: StreamSubscriber, to channel: any Channel, metrics: StreamMetrics) {
        let loop = channel.eventLoop
        @Sendable func writeNext() {
            guard let batch = subscriber.takeBatch() else { return }
            guard let encoder = try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self) else {
                subscriber.wrote()  // the connection is closing
                return
            }
            let written = loop.makePromise(of: Void.self)
            written.futureResult.whenComplete { result in
                subscriber.wrote()
                guard case .success = result else { return }
                metrics.sent.increment(by: Int64(batch.count))
                writeNext()
            }
            let frames = StreamEncoding.frames(batch, binary: subscriber.marketData?.binary ?? false, allocator: channel.allocator)
            encoder.writeAndFlush(NIOAny(frames), promise: written)
        }
        subscriber.attach(.init(loop: loop, write: writeNext))
    }

    // MARK: Client messages

    private func handle(_ message: WebSocketMessage, from subscriber: StreamSubscriber) async {
        do {
            guard case .text(let text) = message else { throw InvalidInput("Messages are JSON text.") }
            let request: StreamRequest
            do {
                request = try JSONDecoder().decode(StreamRequest.self, from: Data(text.utf8))
            } catch {
                throw InvalidInput("A message is a JSON object with an action: subscribe, unsubscribe or ping.")
            }
            switch request.action {
            case .ping:
                _ = subscriber.enqueue(StreamEncoding.pong)
            case .auth:
                throw InvalidInput("This socket is already authorized.")
            case .subscribe, .unsubscribe:
                let current = hub.subscriptions(of: subscriber)
                let change = try await validate(request, userID: subscriber.userID)
                let subscribing = request.action == .subscribe
                let updated = subscribing ? current.adding(change) : current.removing(change)
                guard updated.quotes.count <= StreamSubscriptions.maxQuotes, updated.leagues.count <= StreamSubscriptions.maxLeagues else {
                    throw InvalidInput(
                        "A socket follows at most \(StreamSubscriptions.maxQuotes) symbols and \(StreamSubscriptions.maxLeagues) leagues."
                    )
                }
                hub.update(subscriber, to: updated)
                _ = subscriber.enqueue(StreamEncoding.message("subscribed", SubscribedEvent(updated)))
                if subscribing { await feed.sendSnapshot(to: subscriber, of: change) }
            }
        } catch {
            let problem = AppError.problem(for: error, logger: logger)
            _ = subscriber.enqueue(StreamEncoding.message("error", StreamProblem(code: problem.code, detail: problem.detail)))
        }
    }

    /// The subscriptions a message names, checked: symbols well formed, leagues the user's own.
    private func validate(_ request: StreamRequest, userID: Int) async throws -> StreamSubscriptions {
        var change = StreamSubscriptions()
        let symbols = (request.quotes ?? []).map { $0.uppercased() }
        guard symbols.count <= StreamSubscriptions.maxQuotes, (request.leagues ?? []).count <= StreamSubscriptions.maxLeagues else {
            throw InvalidInput(
                "A socket follows at most \(StreamSubscriptions.maxQuotes) symbols and \(StreamSubscriptions.maxLeagues) leagues."
            )
        }
        if let invalid = symbols.first(where: { !Symbol.isValid($0) }) {
            throw MarketError.unknownSymbol(String(invalid.prefix(20)))
        }
        if let leagueID = request.leagueId {
            guard try await leagues.league(id: leagueID, member: userID).market != nil else { throw LeagueMarketError.noMarket }
        }
        change.quotes = Set(symbols.map { Symbol.stored($0, inLeague: request.leagueId) })
        change.orders = request.orders ?? false
        change.notifications = request.notifications ?? false
        if request.action == .subscribe {
            for leagueID in Set(request.leagues ?? []) {
                _ = try await leagues.league(id: leagueID, member: userID)
            }
        }
        change.leagues = Set(request.leagues ?? [])
        return change
    }
}

/// What a socket follows after a subscribe or unsubscribe.
struct SubscribedEvent: Encodable {
    let quotes: [String]
    let orders: Bool
    let notifications: Bool
    let leagues: [Int]

    init(_ subscriptions: StreamSubscriptions) {
        quotes = Set(subscriptions.quotes.map(Symbol.shown)).sorted()
        orders = subscriptions.orders
        notifications = subscriptions.notifications
        leagues = subscriptions.leagues.sorted()
    }
}

extension StreamSubscriptions {
    func adding(_ other: StreamSubscriptions) -> StreamSubscriptions {
        StreamSubscriptions(
            quotes: quotes.union(other.quotes), orders: orders || other.orders,
            notifications: notifications || other.notifications, leagues: leagues.union(other.leagues)
        )
    }

    func removing(_ other: StreamSubscriptions) -> StreamSubscriptions {
        StreamSubscriptions(
            quotes: quotes.subtracting(other.quotes), orders: orders && !other.orders,
            notifications: notifications && !other.notifications, leagues: leagues.subtracting(other.leagues)
        )
    }
}
