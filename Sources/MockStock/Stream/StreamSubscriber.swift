import NIOCore
import Synchronization

/// One stream connection's outbound queue. Events are queued without waiting, from any
/// task; the connection's writer takes them in batches. The queue is bounded: quotes are
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
    /// How a socket speaking another protocol (Alpaca's trade updates, `/stream`) shows an
    /// order, nil for an order it does not show. Such a socket gets only its orders: no
    /// gap or snapshot messages of this stream's own protocol.
    let renderOrder: (@Sendable (Order) -> StreamMessage?)?

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
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// Ends when the subscriber is stopped, for whoever must cut a stalled writer short.
    let stops: AsyncStream<StopReason>
    private let stop: AsyncStream<StopReason>.Continuation

    init(id: Int, userID: Int, tokenVersion: Int, limit: Int, renderOrder: (@Sendable (Order) -> StreamMessage?)? = nil) {
        self.id = id
        self.userID = userID
        self.tokenVersion = tokenVersion
        self.renderOrder = renderOrder
        self.limit = limit
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (stops, stop) = AsyncStream.makeStream(of: StopReason.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues an event; false when the queue was full and the subscriber is now stopped.
    func enqueue(_ message: StreamMessage) -> Bool {
        let (accepted, wasEmpty) = queue.withLock { queue -> (Bool, Bool) in
            guard queue.stopped == nil else { return (true, false) }
            guard queue.events.count < limit else {
                queue.stopped = .slowConsumer
                return (false, false)
            }
            let wasEmpty = queue.isEmpty
            queue.events.append(message)
            return (true, wasEmpty)
        }
        if !accepted { stop.yield(.slowConsumer) } else if wasEmpty { wake.yield() }
        return accepted
    }

    /// Queues quotes; returns how many replaced an unsent quote of the same symbol.
    func enqueueQuotes(_ quotes: [(symbol: String, message: StreamMessage)]) -> Int {
        let (replaced, wasEmpty) = queue.withLock { queue -> (Int, Bool) in
            guard queue.stopped == nil else { return (0, false) }
            let wasEmpty = queue.isEmpty
            var replaced = 0
            for (symbol, message) in quotes {
                if queue.quotes.updateValue(message, forKey: symbol) != nil {
                    replaced += 1
                } else {
                    queue.quoteOrder.append(symbol)
                }
            }
            return (replaced, wasEmpty)
        }
        // The writer empties the queue whole, so it needs waking only when it was empty.
        if wasEmpty { wake.yield() }
        return replaced
    }

    /// Waits for events and takes them all; nil once the subscriber is stopped.
    func next() async -> [StreamMessage]? {
        for await _ in wakeups {
            let batch = queue.withLock { queue -> [StreamMessage]? in
                guard queue.stopped == nil else { return nil }
                var batch: [StreamMessage] = []
                swap(&batch, &queue.events)
                batch.reserveCapacity(batch.count + queue.quoteOrder.count)
                for symbol in queue.quoteOrder { batch.append(queue.quotes[symbol]!) }
                queue.quotes.removeAll(keepingCapacity: true)
                queue.quoteOrder.removeAll(keepingCapacity: true)
                queue.writingSince = batch.isEmpty ? nil : .now
                return batch
            }
            guard let batch else { return nil }
            if !batch.isEmpty { return batch }
        }
        return nil
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
        wake.yield()
    }

    /// Ends the streams, when the connection is gone.
    func finish() {
        wake.finish()
        stop.finish()
    }

    var stopReason: StopReason? { queue.withLock { $0.stopped } }
}
