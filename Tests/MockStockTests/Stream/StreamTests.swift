import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOCore
import NIOEmbedded
@testable import MockStock
import Postgres
import Synchronization
import Testing
import TestSupport

/// A stream client for tests: connects in the background, keeps every message it receives
/// and how the server closed the socket.
final class StreamTestClient: Sendable {
    private final class Received: Sendable {
        let messages = Mutex<[[String: any Sendable]]>([])
    }

    private let received = Received()
    private let outgoing: AsyncStream<String>.Continuation
    let closed: Task<WebSocketCloseFrame?, any Error>

    init(port: Int, path: String = "/api/stream") {
        let (messages, outgoing) = AsyncStream.makeStream(of: String.self)
        self.outgoing = outgoing
        let received = received
        var logger = Logger(label: "stream-test-client")
        logger.logLevel = .critical
        closed = Task {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)\(path)", logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in messages { try await outbound.write(.text(text)) }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message,
                            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                        else { continue }
                        let sendable = object.mapValues { StreamTestClient.sendable($0) }
                        received.messages.withLock { $0.append(sendable) }
                    }
                    group.cancelAll()
                }
            }
        }
    }

    private static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let dictionary as [String: Any]: dictionary.mapValues { sendable($0) }
        case let array as [Any]: array.map { sendable($0) }
        case let string as String: string
        case let number as NSNumber: number.doubleValue
        default: "null"
        }
    }

    func send(_ json: String) {
        outgoing.yield(json)
    }

    /// Connects, authenticates with `token` and waits for `authorized`.
    static func authorized(port: Int, token: String) async throws -> StreamTestClient {
        let client = StreamTestClient(port: port)
        client.send(#"{"action":"auth","token":"\#(token)"}"#)
        _ = try await client.next("authorized")
        return client
    }

    var events: [[String: any Sendable]] { received.messages.withLock { $0 } }

    func events(_ type: String) -> [[String: any Sendable]] {
        events.filter { $0["type"] as? String == type }
    }

    /// The first event of `type` whose data satisfies `matching`, waiting up to `timeout`.
    @discardableResult
    func next(
        _ type: String, timeout: Duration = .seconds(10), matching: ([String: any Sendable]) -> Bool = { _ in true }
    ) async throws -> [String: any Sendable] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = events(type).first(where: { matching(($0["data"] as? [String: any Sendable]) ?? [:]) }) {
                return (event["data"] as? [String: any Sendable]) ?? [:]
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no \(type) event within \(timeout); received \(events.map { $0["type"] ?? "?" }), last: \(String(describing: events(type).last))")
        throw CancellationError()
    }

    func close() async {
        outgoing.finish()
        closed.cancel()
        _ = try? await closed.value
    }
}

@Suite("Live stream")
struct StreamTests {
    static func configure(_ configuration: inout AppConfiguration) {
        configuration.stream.standingsInterval = .seconds(1)
    }

    @Test("an order placed and filled through process A reaches the owner's socket on process B, with the quote that filled it")
    func fanOutAcrossProcesses() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true, configure: Self.configure) { a in
                try await TestApp.run(on: database, live: true, configure: Self.configure) { b in
                    try await a.seedTradingMarket()
                    let token = try await a.register("streamer").token
                    let socket = try await StreamTestClient.authorized(port: try #require(b.port), token: token)
                    socket.send(#"{"action":"subscribe","quotes":["aapl"],"orders":true,"notifications":true}"#)
                    let subscribed = try await socket.next("subscribed")
                    #expect(subscribed["quotes"] as? [String] == ["AAPL"])
                    let snapshot = try await socket.next("snapshot")
                    #expect((snapshot["quotes"] as? [[String: any Sendable]])?.first?["price"] as? String == "150.00")
                    #expect((snapshot["orders"] as? [any Sendable])?.isEmpty == true)

                    let order = try await a.placeOrderOK(
                        #"{"symbol":"AAPL","side":"buy","type":"limit","quantity":2,"limitPrice":"140.00","timeInForce":"gtc"}"#, token: token
                    )
                    try await socket.next("order") { $0["id"] as? Double == Double(order.id) && $0["status"] as? String == "new" }
                    try await a.setPrice("AAPL", "139.50")
                    let quote = try await socket.next("quote") { $0["price"] as? String == "139.50" }
                    #expect(quote["symbol"] as? String == "AAPL" && quote["name"] as? String == "Apple Inc.")
                    let filled = try await socket.next("order") { $0["status"] as? String == "filled" }
                    #expect(filled["id"] as? Double == Double(order.id) && filled["filledAveragePrice"] as? String == "139.50")
                    // The first trade earns an achievement, announced as a notification.
                    let notification = try await socket.next("notification")
                    #expect((notification["title"] as? String)?.hasPrefix("Achievement earned") == true)
                    // Each event arrived once, although both processes heard it.
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(socket.events("order").count == 2)
                    #expect(socket.events("quote").count == 1)
                    await socket.close()
                }
            }
        }
    }

    @Test("a user never receives another user's orders, notifications or league standings")
    func eventsStayWithTheirOwner() async throws {
        try await TestApp.run(live: true, configure: Self.configure) { client in
            try await client.seedTradingMarket()
            let alice = try await client.register("alice").token
            let bob = try await client.register("bob").token
            let created = try await client.post("/api/leagues/create", json: #"{"name":"Alice's league"}"#, token: alice)
            #expect(created.status == .created)
            let leagueID = try #require(try JSONSerialization.jsonObject(with: Data(buffer: created.body)) as? [String: Any])["id"] as! Int
            let port = try #require(client.port)
            let aliceSocket = try await StreamTestClient.authorized(port: port, token: alice)
            let bobSocket = try await StreamTestClient.authorized(port: port, token: bob)
            aliceSocket.send(#"{"action":"subscribe","quotes":["AAPL"],"orders":true,"notifications":true,"leagues":[\#(leagueID)]}"#)
            bobSocket.send(#"{"action":"subscribe","quotes":["AAPL"],"orders":true,"notifications":true}"#)
            bobSocket.send(#"{"action":"subscribe","leagues":[\#(leagueID)]}"#)
            let refused = try await bobSocket.next("error")
            #expect(refused["code"] as? String == "not_found")
            let aliceSnapshot = try await aliceSocket.next("snapshot")
            let league = try #require((aliceSnapshot["standings"] as? [[String: any Sendable]])?.first)
            #expect(league["leagueId"] as? Double == Double(leagueID))
            #expect((league["items"] as? [[String: any Sendable]])?.first?["holdingsValue"] as? String == "0.00")

            // Alice trades (an order, a fill, an achievement) and her standing changes with the price.
            _ = try await client.placeOrderOK(#"{"symbol":"AAPL","side":"buy","type":"market","quantity":10}"#, token: alice)
            try await aliceSocket.next("order") { $0["status"] as? String == "filled" }
            try await aliceSocket.next("notification")
            try await client.setPrice("AAPL", "160.00")
            try await aliceSocket.next("standings") { data in
                (data["items"] as? [[String: any Sendable]])?.first?["holdingsValue"] as? String == "1600.00"
            }
            // Both follow AAPL: the price is public.
            try await bobSocket.next("quote") { $0["price"] as? String == "160.00" }
            #expect(bobSocket.events("order").isEmpty)
            #expect(bobSocket.events("notification").isEmpty)
            #expect(bobSocket.events("standings").isEmpty)
            let bobSnapshots = bobSocket.events("snapshot").compactMap { $0["data"] as? [String: any Sendable] }
            #expect(bobSnapshots.allSatisfy { ($0["orders"] as? [any Sendable])?.isEmpty ?? true })
            #expect(bobSnapshots.allSatisfy { $0["standings"] == nil })

            // A broadcast is everyone's.
            let broadcast = try await client.send(
                .post, "/api/admin/notifications", body: #"{"title":"Market news","body":"Hello all"}"#, token: try await client.adminToken()
            )
            #expect(broadcast.status == .created)
            try await bobSocket.next("notification") { $0["title"] as? String == "Market news" }
            try await aliceSocket.next("notification") { $0["title"] as? String == "Market news" }

            let metrics = try await client.get("/metrics", token: nil)
            let exposition = String(buffer: metrics.body)
            #expect(exposition.contains("stream_clients 2"))
            #expect(exposition.contains("stream_events_sent_total"))
            await aliceSocket.close()
            await bobSocket.close()
        }
    }

    @Test("after the listening connection breaks, clients get a gap and a fresh snapshot, and events flow again")
    func resumesAfterTheListenerBreaks() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true, configure: Self.configure) { client in
                try await client.seedTradingMarket()
                let token = try await client.register("resumer").token
                let socket = try await StreamTestClient.authorized(port: try #require(client.port), token: token)
                socket.send(#"{"action":"subscribe","quotes":["AAPL"]}"#)
                try await socket.next("snapshot")

                #expect(try await database.terminateListeners() == 1)
                try await socket.next("gap")
                try await socket.next("snapshot") { _ in socket.events("snapshot").count == 2 }
                try await client.setPrice("AAPL", "151.25")
                try await socket.next("quote") { $0["price"] as? String == "151.25" }
                await socket.close()
            }
        }
    }

    @Test("a price stored through process A is what process B answers at once, however long B caches quotes")
    func announcedPricesRefreshTheQuoteCache() async throws {
        try await TemporaryDatabase.with { database in
            let caching: @Sendable (inout AppConfiguration) -> Void = { $0.quoteCacheLifetime = .seconds(60) }
            try await TestApp.run(on: database, live: true, configure: caching) { a in
                try await TestApp.run(on: database, live: true, configure: caching) { b in
                    try await a.seedTradingMarket()
                    let token = try await a.register("cached").token
                    #expect(try await b.decode(StockDetailBody.self, "/api/stock/AAPL", token: token).price == "150.00")
                    try await a.setPrice("AAPL", "157.50")
                    var price = ""
                    for _ in 0..<40 {
                        price = try await b.decode(StockDetailBody.self, "/api/stock/AAPL", token: token).price
                        if price == "157.50" { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    #expect(price == "157.50", "B still answers its cached price 2 s after the change")
                }
            }
        }
    }

    @Test("a logout through process A closes the sockets of the revoked tokens on process B at once; a new token's socket stays open")
    func logoutClosesSockets() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true, configure: Self.configure) { a in
                try await TestApp.run(on: database, live: true, configure: Self.configure) { b in
                    let old = try await a.register("leaver").token
                    let other = try await a.register("stayer").token
                    let revoked = try await StreamTestClient.authorized(port: try #require(b.port), token: old)
                    let bystander = try await StreamTestClient.authorized(port: try #require(b.port), token: other)
                    #expect(try await a.post("/api/auth/logout", json: "", token: old).status == .noContent)
                    // Closed by the announcement within moments, not when the token expires in an hour.
                    let frame = try await withThrowingTaskGroup(of: WebSocketCloseFrame??.self) { group in
                        group.addTask { .some(try await revoked.closed.value) }
                        group.addTask {
                            try await Task.sleep(for: .seconds(3))
                            return .none
                        }
                        let first = try await group.next() ?? nil
                        group.cancelAll()
                        return first
                    }
                    let closed = try #require(frame, "the revoked token's socket is still open 3 s after the logout")
                    #expect(closed?.closeCode == .policyViolation && closed?.reason?.contains("revoked") == true)
                    let login = try await a.login("leaver")
                    let fresh = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: login.body)).token
                    let kept = try await StreamTestClient.authorized(port: try #require(b.port), token: fresh)
                    // The new token and another user are unaffected.
                    for socket in [kept, bystander] {
                        socket.send(#"{"action":"ping"}"#)
                        try await socket.next("pong")
                        await socket.close()
                    }
                }
            }
        }
    }

    @Test("a socket with no token, a bad one or an expired one is closed with 1008")
    func refusesBadTokens() async throws {
        try await TestApp.run(live: true) { client in
            let session = try await client.register("closer")
            let port = try #require(client.port)
            let now = Date()
            let expired = try await sign(
                ForgedClaims(sub: String(session.user.id), iss: "mockstock", aud: "mockstock-api", iat: now - 600, exp: now - 1, ver: 0),
                secret: TestApp.jwtSecret
            )
            for first in [
                #"{"action":"subscribe","quotes":["AAPL"]}"#,
                #"{"action":"auth","token":"not-a-token"}"#,
                #"{"action":"auth","token":"\#(expired)"}"#,
                "not json",
            ] {
                let socket = StreamTestClient(port: port)
                socket.send(first)
                let frame = try await socket.closed.value
                #expect(frame?.closeCode == .policyViolation, "\(first)")
                #expect(socket.events.isEmpty)
            }
        }
    }

    @Test("bad messages get error events with stable codes and leave the socket working")
    func badMessages() async throws {
        try await TestApp.run(live: true) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("sender").token
            let socket = try await StreamTestClient.authorized(port: try #require(client.port), token: token)
            let symbols = (0..<101).map { #""S\#($0)""# }.joined(separator: ",")
            for message in [
                "{not json", #"{"action":"dance"}"#, #"{"action":"subscribe","quotes":["no spaces allowed"]}"#,
                #"{"action":"subscribe","quotes":[\#(symbols)]}"#, #"{"action":"subscribe","leagues":[999999]}"#,
                #"{"action":"auth","token":"again"}"#,
            ] {
                socket.send(message)
            }
            socket.send(#"{"action":"ping"}"#)
            try await socket.next("pong")
            let codes = socket.events("error").compactMap { ($0["data"] as? [String: any Sendable])?["code"] as? String }
            #expect(codes == ["validation_failed", "validation_failed", "unknown_symbol", "validation_failed", "not_found", "validation_failed"])
            socket.send(#"{"action":"subscribe","quotes":["AAPL"]}"#)
            try await socket.next("snapshot")
            socket.send(#"{"action":"unsubscribe","quotes":["AAPL"]}"#)
            try await socket.next("subscribed") { ($0["quotes"] as? [String])?.isEmpty == true }
            try await client.setPrice("AAPL", "155.00")
            try await Task.sleep(for: .milliseconds(500))
            #expect(socket.events("quote").isEmpty)
            await socket.close()
        }
    }

    @Test("queued events are announced once each, in the order they were queued, however many processes announce at once")
    func announcedOnceInOrder() async throws {
        try await TemporaryDatabase.with { database in
            // The app migrates the database and runs its own announcer beside the three below.
            try await TestApp.run(on: database) { _ in
                let pool = PostgresConnectionPool(configuration: database.configuration)
                let listener = PostgresListener(pool: pool, channels: ["mockstock_stream"], logger: Logger(label: "announce-test"),
                                                wait: .milliseconds(100))
                let (events, continuation) = AsyncStream.makeStream(of: PostgresListener.Event.self)
                let listening = Task { await listener.run { continuation.yield($0) } }
                var received = events.makeAsyncIterator()
                #expect(await received.next() == .listening(afterGap: false))
                let count = 3000
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for part in 0..<3 {
                        group.addTask {
                            try await pool.execute("""
                                SELECT stream_publish(jsonb_build_object('kind', 'test', 'n', n))
                                FROM generate_series(\(part * 1000 + 1), \(part * 1000 + 1000)) n ORDER BY n
                                """)
                        }
                    }
                    try await group.waitForAll()
                    for _ in 0..<3 {
                        group.addTask {
                            while try await pool.query("SELECT stream_announce(100)").decodeColumn(Int.self) != [0] {}
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await pool.query("SELECT count(*) FROM stream_outbox").decodeColumn(Int.self) == [0])
                let collected = Mutex<[Int]>([])
                let reading = Task {
                    while collected.withLock({ $0.count }) < count, let event = await received.next() {
                        guard case .notification(_, let payload) = event else { Issue.record("unexpected \(event)"); continue }
                        struct Test: Decodable { let kind: String; let n: Int }
                        if let event = try? JSONDecoder().decode(Test.self, from: Data(payload.utf8)), event.kind == "test" {
                            collected.withLock { $0.append(event.n) }
                        }
                    }
                }
                // Generous: the whole test suite runs at once on a few cores.
                let deadline = ContinuousClock.now + .seconds(60)
                while collected.withLock({ $0.count }) < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
                reading.cancel()
                let numbers = collected.withLock { $0 }
                #expect(numbers.count == count && Set(numbers).count == count, "each announced once")
                #expect(numbers.filter { $0 <= 1000 } == Array(1...1000), "one transaction's events in the order queued")
                listening.cancel()
                await listening.value
                await pool.close()
            }
        }
    }

    @Test("a tick of 150 quotes, too big for one NOTIFY, is stored, announced by id and delivered whole")
    func oversizedAnnouncement() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database, live: true) { client in
                let admin = try await client.adminToken()
                let symbols = (0..<150).map { "BIG\($0)" }
                let instruments = symbols.map { #"{"symbol":"\#($0)","name":"\#($0) Holdings Incorporated"}"# }.joined(separator: ",")
                #expect(try await client.send(.put, "/api/admin/instruments", body: "[\(instruments)]", token: admin).status == .ok)
                let token = try await client.register("watcher").token
                let socket = try await StreamTestClient.authorized(port: try #require(client.port), token: token)
                let followed = symbols.prefix(100).map { #""\#($0)""# }.joined(separator: ",")
                socket.send(#"{"action":"subscribe","quotes":[\#(followed)]}"#)
                try await socket.next("snapshot")
                let quotes = symbols.map { #"{"symbol":"\#($0)","price":"12.34"}"# }.joined(separator: ",")
                #expect(try await client.send(.post, "/api/admin/quotes", body: "[\(quotes)]", token: admin).status == .ok)
                try await socket.next("quote") { _ in socket.events("quote").count == 100 }
                try await Task.sleep(for: .milliseconds(300))
                #expect(socket.events("quote").count == 100)
                #expect(Set(socket.events("quote").compactMap { ($0["data"] as? [String: any Sendable])?["symbol"] as? String }) == Set(symbols.prefix(100)))
                let pool = PostgresConnectionPool(configuration: database.configuration)
                #expect(try await pool.query("SELECT count(*) FROM stream_payloads").decodeColumn(Int.self) == [1])
                await pool.close()
                await socket.close()
            }
        }
    }

    @Test("a slow connection's quotes are kept as the latest per symbol; other events are bounded and overflowing stops it")
    func boundedQueue() async throws {
        let subscriber = StreamSubscriber(id: 1, userID: 7, tokenVersion: 0, limit: 3)
        let loop = EmbeddedEventLoop()
        let wakes = Mutex(0)
        func message(_ text: String) -> StreamMessage { ByteBuffer(string: text) }
        #expect(subscriber.enqueueQuotes([("AAPL", message("a1")), ("MSFT", message("m1"))]).replaced == 0)
        subscriber.attach(.init(loop: loop, write: { wakes.withLock { $0 += 1 } }))
        loop.run()
        #expect(wakes.withLock { $0 } == 1, "attaching wakes the writer for what was queued before")
        let again = subscriber.enqueueQuotes([("AAPL", message("a2"))])
        #expect(again.replaced == 1, "a newer AAPL price replaces the unsent one")
        #expect(again.wake == nil, "a queue with events waiting needs no second wake-up")
        #expect(subscriber.enqueue(message("order 1")))
        loop.run()
        #expect(wakes.withLock { $0 } == 1, "a queue with events waiting needs no second wake-up")
        #expect(subscriber.takeBatch()?.map { String(buffer: $0) } == ["order 1", "a2", "m1"])

        // The writer is now stuck on that batch: after the stall limit it counts as stalled,
        // events queued meanwhile wait for it (no wake-up, no second batch at once).
        #expect(subscriber.isStalled(longerThan: .seconds(5), now: .now + .seconds(6)))
        #expect(subscriber.enqueue(message("order 2")))
        loop.run()
        #expect(wakes.withLock { $0 } == 1)
        #expect(subscriber.takeBatch() == nil, "one batch is written at a time")
        subscriber.wrote()
        #expect(!subscriber.isStalled(longerThan: .seconds(5), now: .now + .seconds(6)))
        #expect(subscriber.takeBatch()?.map { String(buffer: $0) } == ["order 2"], "the finished write takes what waited")
        subscriber.wrote()
        #expect(subscriber.takeBatch() == nil)
        #expect(subscriber.enqueue(message("order 3")))
        loop.run()
        #expect(wakes.withLock { $0 } == 2, "an idle writer is woken by the next event")
        #expect(subscriber.takeBatch()?.map { String(buffer: $0) } == ["order 3"])
        subscriber.wrote()

        for event in ["e1", "e2", "e3"] { #expect(subscriber.enqueue(message(event))) }
        #expect(subscriber.enqueue(message("e4")) == false, "the fourth unsent event is one too many")
        #expect(subscriber.stopReason == .slowConsumer)
        var stops = subscriber.stops.makeAsyncIterator()
        #expect(await stops.next() == .slowConsumer)
        #expect(subscriber.takeBatch() == nil, "a stopped subscriber's writer writes nothing more")
    }

    @Test("a batch is framed as RFC 6455 text frames: 7-bit, 16-bit and 64-bit lengths, back to back")
    func framing() throws {
        let sizes = [0, 125, 126, 65_535, 65_536, 70_000]
        let messages = sizes.map { ByteBuffer(repeating: UInt8(ascii: "x"), count: $0) }
        var buffer = StreamEncoding.frames(messages, allocator: ByteBufferAllocator())
        for size in sizes {
            #expect(buffer.readInteger(as: UInt8.self) == 0x81)
            let marker = buffer.readInteger(as: UInt8.self) ?? 0
            let length: Int = switch marker {
            case 126: Int(buffer.readInteger(as: UInt16.self) ?? 0)
            case 127: Int(buffer.readInteger(as: UInt64.self) ?? 0)
            default: Int(marker)
            }
            #expect(length == size && marker == (size < 126 ? UInt8(size) : size < 65_536 ? 126 : 127))
            #expect(buffer.readBytes(length: length) == Array(repeating: UInt8(ascii: "x"), count: size))
        }
        #expect(buffer.readableBytes == 0)
    }
}
