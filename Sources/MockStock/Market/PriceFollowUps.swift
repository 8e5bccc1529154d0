import Logging
import Prometheus
import ServiceLifecycle
import Synchronization

/// What follows new prices: corporate actions first (a split adjusts the positions and
/// orders the new prices meet), then the order matcher. Whoever stored the prices (an
/// admin's quote, a market tick, a fetched quote) is told at once and does not wait: the
/// follow-ups run here, in the background, one pass at a time.
///
/// Prices stored while a pass runs are coalesced: their symbols are gathered (or "every
/// symbol") and followed up by one pass when the current one ends, so a fast market makes
/// fewer, larger passes instead of a queue. A pass that fails is logged and left to the
/// periodic sweep, which matches everything; so is one cut short by shutdown. The
/// `price_followups_pending` gauge counts passes queued or running (0 when every stored
/// price has been followed up).
final class PriceFollowUps: Service, Sendable {
    struct Listener: Sendable {
        let name: String
        let run: @Sendable (_ symbols: [String]?) async throws -> Void
    }

    /// Symbols waiting for a pass.
    private enum Queued {
        case nothing
        case symbols(Set<String>)
        case everything

        mutating func add(_ symbols: [String]?) {
            switch (self, symbols) {
            case (.everything, _): return
            case (_, nil): self = .everything
            case (.nothing, let new?): self = .symbols(Set(new))
            case (.symbols(let old), let new?): self = .symbols(old.union(new))
            }
        }

        var isEmpty: Bool {
            if case .nothing = self { true } else { false }
        }

        /// The symbols a pass follows up (nil: every symbol), nil when nothing waits.
        var pass: [String]?? {
            switch self {
            case .nothing: nil
            case .symbols(let set): .some(set.sorted())
            case .everything: .some(nil)
            }
        }
    }

    private struct State {
        var listeners: [Listener] = []
        var queued = Queued.nothing
        var running = false
        var pending: Int { (running ? 1 : 0) + (queued.isEmpty ? 0 : 1) }
    }

    private let state = Mutex(State())
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation
    private let pendingGauge: Gauge
    private let logger: Logger
    /// Opened when start-up (migrations) is done: the listeners need the schema.
    private let started: StartSignal

    init(pending: Gauge, started: StartSignal, logger: Logger) {
        (wake, wakeUp) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.pendingGauge = pending
        self.started = started
        self.logger = logger
    }

    /// Set once everything is built: the markets that store prices are built before those
    /// who listen.
    func set(_ all: [Listener]) {
        state.withLock { $0.listeners = all }
    }

    /// Queues a pass for these symbols (nil: every symbol) and returns at once.
    func tell(_ symbols: [String]?) {
        let pending = state.withLock { state in
            state.queued.add(symbols)
            return state.pending
        }
        pendingGauge.set(Double(pending))
        wakeUp.yield()
    }

    /// Passes queued or running.
    var pending: Int { state.withLock { $0.pending } }

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.started.wait() }
        await cancelWhenGracefulShutdown {
            for await _ in self.wake {
                await self.runQueuedPasses()
            }
        }
        wakeUp.finish()
    }

    private func runQueuedPasses() async {
        while !Task.isCancelled {
            let (symbols, listeners, pending): ([String]??, [Listener], Int) = state.withLock { state in
                let pass = state.queued.pass
                state.queued = .nothing
                state.running = pass != nil
                return (pass, state.listeners, state.pending)
            }
            pendingGauge.set(Double(pending))
            guard let symbols else { return }
            for listener in listeners {
                do {
                    try await listener.run(symbols)
                } catch {
                    logger.warning("\(listener.name) after new prices failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
