import NIOCore
import Synchronization

/// One stream connection's outbound queue. Events are queued without waiting, from any
/// task; the connection's writer takes them in batches: it is woken (`attach`) when the
/// queue gains events while no batch is being written, and takes the next batch itself
/// when a write finishes. The queue is bounded: quotes are
/// kept as the latest per symbol (a newer price replaces one not yet sent, which is
/// counted as dropped), other events up to `limit`. A connection past that, or whose
/// writer has not finished a write for `stallLimit`, is stopped as a slow consumer.
///
/// Memory per connection is therefore at most `limit` events plus one quote per followed
/// symbol (`StreamSubscriptions.maxQuotes`), besides the socket's own buffers.
final class StreamSubscriber: Sendable {
    enum StopReason: Sendable, Equatable {
        case slowConsumer
        case tokenExpired
        case tokenRevoked
        /// The API key a `/stream` socket authenticated with was revoked.
        case keyRevoked
    }

    let id: Int
    let userID: Int
    /// The version of the token the socket authenticated with: a logout or password
    /// change moves the user's version on and closes the socket.
    let tokenVersion: Int
    /// How a socket speaking another protocol (Alpaca's trade updates, `/stream`) shows a
    /// change of an order: no messages for one it does not show. Such a socket gets only
    /// its orders: no gap or snapshot messages of this stream's own protocol.
    let renderOrder: (@Sendable (OrderChange) -> [StreamMessage])?
    /// How a socket of Alpaca's market-data stream shows prices and minute bars, in binary
    /// frames when it speaks msgpack; nil for this stream's own protocol.
    let marketData: MarketData?

    struct MarketData: Sendable {
        /// The messages of one price (nil: none for this socket).
        let price: @Sendable (PriceQuote) -> StreamMessage?
        let bar: @Sendable (MinuteBar) -> StreamMessage?
        let binary: Bool
    }

    private struct Queue {
        var events: [StreamMessage] = []
        var quotes: [String: StreamMessage] = [:]
        var quoteOrder: [String] = []
        var stopped: StopReason?
        /// When the writer took a batch it has not finished writing.
        var writingSince: ContinuousClock.Instant?

        var isEmpty: Bool { events.isEmpty && quoteOrder.isEmpty }
    }

    private let queue = Mutex(Queue())
    private let limit: Int
    /// The connection's writer: `write` takes and writes the next batch, on `loop`.
    struct Writer: Sendable {
        let loop: any EventLoop
        let write: @Sendable () -> Void
    }

    /// The writer, once attached.
    private let writer = Mutex<Writer?>(nil)
    /// Ends when the subscriber is stopped, for whoever must cut a stalled writer short.
    let stops: AsyncStream<StopReason>
    private let stop: AsyncStream<StopReason>.Continuation

    init(
        id: Int, userID: Int, tokenVersion: Int, limit: Int, renderOrder: (@Sendable (OrderChange) -> [StreamMessage])? = nil,
        marketData: MarketData? = nil
    ) {
        self.id = id
        self.userID = userID
        self.tokenVersion = tokenVersion
        self.renderOrder = renderOrder
        self.marketData = marketData
        self.limit = limit
        (stops, stop) = AsyncStream.makeStream(of: StopReason.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues an event; false when the queue was full and the subscriber is now stopped.
    func enqueue(_ message: StreamMessage) -> Bool {
        let (accepted, idle) = queue.withLock { queue -> (Bool, Bool) in
            guard queue.stopped == nil else { return (true, false) }
            guard queue.events.count < limit else {
                queue.stopped = .slowConsumer
                return (false, false)
            }
            let idle = queue.isEmpty && queue.writingSince == nil
            queue.events.append(message)
            return (true, idle)
        }
        if !accepted { stop.yield(.slowConsumer) } else if idle { wake() }
        return accepted
    }

    /// Queues quotes; returns how many replaced an unsent quote of the same symbol, and the
    /// writer when it must be woken, which the caller does (`wake(_:)`), so that a tick's
    /// fan-out wakes each event loop once rather than each connection on its own.
    func enqueueQuotes(_ quotes: some Sequence<(symbol: String, message: StreamMessage)>) -> (replaced: Int, wake: Writer?) {
        let (replaced, idle) = queue.withLock { queue -> (Int, Bool) in
            guard queue.stopped == nil else { return (0, false) }
            let idle = queue.isEmpty && queue.writingSince == nil
            var replaced = 0
            for (symbol, message) in quotes {
                if queue.quotes.updateValue(message, forKey: symbol) != nil {
                    replaced += 1
                } else {
                    queue.quoteOrder.append(symbol)
                }
            }
            return (replaced, idle)
        }
        // The writer empties the queue whole and looks again after each write, so it needs
        // waking only when the queue was empty and no write was under way.
        return (replaced, idle ? writer.withLock { $0 } : nil)
    }

    /// Attaches the connection's writer, run on its event loop whenever it should take a
    /// batch; once now, for what was queued before.
    func attach(_ writer: Writer) {
        self.writer.withLock { $0 = writer }
        wake()
    }

    private func wake() {
        if let writer = writer.withLock({ $0 }) { writer.loop.execute(writer.write) }
    }

    /// Runs writers, with one task for each event loop among them.
    static func wake(_ writers: [Writer]) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, writes: [@Sendable () -> Void])] = [:]
        for writer in writers { byLoop[ObjectIdentifier(writer.loop), default: (writer.loop, [])].writes.append(writer.write) }
        for (loop, writes) in byLoop.values {
            loop.execute { for write in writes { write() } }
        }
    }

    /// Takes every queued event, as one batch to write; nil when there is none, a batch is
    /// still being written (the writer asks again once it is), or the subscriber is stopped.
    /// Until `wrote`, the batch counts as being written.
    func takeBatch() -> [StreamMessage]? {
        queue.withLock { queue -> [StreamMessage]? in
            guard queue.stopped == nil, queue.writingSince == nil, !queue.isEmpty else { return nil }
            var batch: [StreamMessage] = []
            swap(&batch, &queue.events)
            batch.reserveCapacity(batch.count + queue.quoteOrder.count)
            for symbol in queue.quoteOrder { batch.append(queue.quotes[symbol]!) }
            queue.quotes.removeAll(keepingCapacity: true)
            queue.quoteOrder.removeAll(keepingCapacity: true)
            queue.writingSince = .now
            return batch
        }
    }

    /// The writer finished the batch it took.
    func wrote() {
        queue.withLock { $0.writingSince = nil }
    }

    /// Whether the writer has been stuck on one batch for longer than `limit`.
    func isStalled(longerThan limit: Duration, now: ContinuousClock.Instant) -> Bool {
        queue.withLock { queue in queue.writingSince.map { now - $0 > limit } ?? false }
    }

    /// Stops the subscriber: its writer ends and whoever watches `stops` learns why.
    func stop(_ reason: StopReason) {
        let first = queue.withLock { queue -> Bool in
            guard queue.stopped == nil else { return false }
            queue.stopped = reason
            return true
        }
        guard first else { return }
        stop.yield(reason)
    }

    /// Ends the stream of stops and detaches the writer, when the connection is gone.
    func finish() {
        writer.withLock { $0 = nil }
        stop.finish()
    }

    var stopReason: StopReason? { queue.withLock { $0.stopped } }
}
