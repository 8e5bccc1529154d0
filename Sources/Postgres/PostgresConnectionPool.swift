import Logging
import ServiceLifecycle
import Synchronization

/// A bounded pool of libpq connections, run as a service that closes them on shutdown.
///
/// Connections open lazily, are checked at the start of each lease and reopened when the
/// server restarted or killed their backend, so callers see at most one failed request
/// per broken connection, and none when the break was noticed while it sat idle.
public final class PostgresConnectionPool: Service, Sendable {
    public let configuration: PostgresConfiguration
    let logger: Logger
    let loop: PostgresEventLoop
    private let state: Mutex<State>

    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<PostgresConnection, any Error>
        /// When the wait fails with `acquireTimeout`.
        let deadline: ContinuousClock.Instant
    }

    private struct State {
        var idle: [PostgresConnection] = []
        var created = 0
        var waiters: [Waiter] = []
        var cancelledWaiters: Set<Int> = []
        var nextWaiterID = 0
        var isClosed = false
        /// Whether the task that fails overdue waiters is running (`failOverdueWaiters`).
        var sweeping = false
    }

    /// A snapshot of the pool, for metrics.
    public struct Statistics: Sendable {
        public let connections: Int
        public let idle: Int
        public let inUse: Int
        public let waiting: Int
    }

    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "postgres")) {
        self.configuration = configuration
        self.logger = logger
        self.loop = PostgresEventLoop()
        self.state = Mutex(State())
    }

    /// The pool's I/O thread as a task executor. Tasks that do little but talk to the
    /// database run fastest on it: `withTaskExecutorPreference(pool.executor) { ... }`.
    public var executor: any TaskExecutor { loop }

    public var statistics: Statistics {
        state.withLock { state in
            Statistics(
                connections: state.created,
                idle: state.idle.count,
                inUse: state.created - state.idle.count,
                waiting: state.waiters.count
            )
        }
    }

    // MARK: Service

    /// Waits for graceful shutdown, then closes the pool.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Refuses new leases, fails waiting callers and closes idle connections.
    public func close() async {
        let (idle, waiters) = state.withLock { state in
            state.isClosed = true
            defer {
                state.idle = []
                state.waiters = []
            }
            return (state.idle, state.waiters)
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: Self.closedError)
        }
        for connection in idle {
            _ = try? await loop.perform(.close, on: connection)
        }
        await loop.stop()
    }

    private static let closedError = PostgresError(kind: .poolClosed, message: "the connection pool has been shut down")

    // MARK: Leasing

    /// Leases a connection for the duration of `body`.
    public func withConnection<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresSession) async throws -> T
    ) async throws -> T {
        let connection = try await acquire()
        defer { release(connection) }
        return try await body(PostgresSession(connection: connection, loop: loop))
    }

    /// Runs one statement on a pooled connection and returns its rows.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRows {
        try await withConnection { try await $0.query(query) }
    }

    /// Runs one statement on a pooled connection and returns the number of rows it changed.
    @discardableResult
    public func execute(_ query: PostgresQuery) async throws -> Int {
        try await withConnection { try await $0.execute(query) }
    }

    /// Runs one statement that is a transaction of its own, again (up to
    /// `configuration.transactionAttempts` times in all) when it meets a serialization
    /// failure or deadlock: nothing of a failed statement happened, so running it again is
    /// safe.
    @discardableResult
    public func queryRetryingTransientFailures(_ query: PostgresQuery) async throws -> PostgresRows {
        var attempt = 1
        while true {
            do {
                return try await self.query(query)
            } catch let error as PostgresError where error.isTransient && attempt < configuration.transactionAttempts {
                attempt += 1
                try await Self.backOff(attempt: attempt)
            }
        }
    }

    /// Waits a random 1–2^(attempt+1) ms (at most 64) before another attempt, so the
    /// transactions that collided do not collide again.
    private static func backOff(attempt: Int) async throws {
        try await Task.sleep(for: .milliseconds(Int.random(in: 1...(1 << min(attempt + 1, 6)))))
    }

    private func acquire() async throws -> PostgresConnection {
        enum Next { case use(PostgresConnection), create, wait(Int), closed }
        let next: Next = state.withLock { state in
            if state.isClosed { return .closed }
            if let connection = state.idle.popLast() { return .use(connection) }
            if state.created < configuration.maxConnections {
                state.created += 1
                return .create
            }
            state.nextWaiterID += 1
            return .wait(state.nextWaiterID)
        }
        let connection: PostgresConnection
        switch next {
        case .use(let idle): connection = idle
        case .create: connection = PostgresConnection(configuration: configuration)
        case .wait(let id): connection = try await waitForConnection(id: id)
        case .closed: throw Self.closedError
        }
        connection.needsCheck = true
        return connection
    }

    private func waitForConnection(id: Int) async throws -> PostgresConnection {
        let deadline = ContinuousClock.now + configuration.acquireTimeout
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Enqueued { case refused, waiting, startSweeper }
                let enqueued: Enqueued = state.withLock { state in
                    if state.isClosed || state.cancelledWaiters.remove(id) != nil { return .refused }
                    state.waiters.append(Waiter(id: id, continuation: continuation, deadline: deadline))
                    if state.sweeping { return .waiting }
                    state.sweeping = true
                    return .startSweeper
                }
                switch enqueued {
                case .refused: continuation.resume(throwing: Task.isCancelled ? CancellationError() : Self.closedError)
                case .waiting: break
                case .startSweeper: Task { await self.failOverdueWaiters() }
                }
            }
        } onCancel: {
            failWaiter(id: id, with: CancellationError())
        }
    }

    /// Fails the waiters whose deadline has passed, sleeping until the first one's, for as
    /// long as anyone waits: one timer for every waiter. (A timer task per wait cost a task,
    /// a timer and its cancellation for each request beyond the pool's connections: server
    /// CPU per request rose by a third from 16 to 256 connections.) Waiters queue in order
    /// and share one timeout, so the first has the earliest deadline.
    private func failOverdueWaiters() async {
        while true {
            let (overdue, next): ([Waiter], ContinuousClock.Instant?) = state.withLock { state in
                let now = ContinuousClock.now
                let count = state.waiters.prefix { $0.deadline <= now }.count
                let overdue = Array(state.waiters.prefix(count))
                state.waiters.removeFirst(count)
                guard let first = state.waiters.first else {
                    state.sweeping = false
                    return (overdue, nil)
                }
                return (overdue, first.deadline)
            }
            for waiter in overdue {
                waiter.continuation.resume(
                    throwing: PostgresError(kind: .acquireTimeout, message: "no database connection became free in time")
                )
            }
            guard let next else { return }
            try? await Task.sleep(until: next, clock: .continuous)
        }
    }

    private func failWaiter(id: Int, with error: any Error) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                if error is CancellationError { state.cancelledWaiters.insert(id) }
                return nil
            }
            return state.waiters.remove(at: index)
        }
        guard let waiter else { return }
        waiter.continuation.resume(throwing: error)
    }

    private func release(_ connection: PostgresConnection) {
        let waiter: Waiter? = state.withLock { state in
            if state.isClosed {
                state.created -= 1
                return nil
            }
            if state.waiters.isEmpty {
                state.idle.append(connection)
                return nil
            }
            return state.waiters.removeFirst()
        }
        guard let waiter else { return }
        connection.needsCheck = true
        waiter.continuation.resume(returning: connection)
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    /// On a serialization failure or deadlock (40001, 40P01), or a connection lost before
    /// the commit was sent, the whole block runs again, up to
    /// `configuration.transactionAttempts` times in all, so `body` must not have effects
    /// outside the database.
    public func withTransaction<T>(
        _ level: PostgresIsolationLevel = .readCommitted,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresSession) async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            var commitSent = false
            do {
                return try await withConnection { session in
                    try await session.runScript(level.beginStatement)
                    do {
                        let value = try await body(session)
                        commitSent = true
                        try await session.runScript("COMMIT")
                        return value
                    } catch {
                        if !commitSent { try? await session.runScript("ROLLBACK") }
                        throw error
                    }
                }
            } catch let error as PostgresError
                where attempt < configuration.transactionAttempts
                && (error.isTransient || (error.isConnectionFailure && !commitSent && error.kind != .poolClosed))
            {
                logger.debug("retrying transaction", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                attempt += 1
                try await Self.backOff(attempt: attempt)
            }
        }
    }
}

/// Transaction isolation levels.
public enum PostgresIsolationLevel: Sendable {
    case readCommitted, repeatableRead, serializable

    var beginStatement: String {
        switch self {
        case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
        case .repeatableRead: "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }
}
