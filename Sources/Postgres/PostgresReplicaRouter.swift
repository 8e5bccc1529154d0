import Logging
import ServiceLifecycle
import Synchronization

/// Sends reads that may be a little stale to a streaming replica while it keeps up, and
/// everything else, and every read once it does not, to the primary.
///
/// Every `probeInterval` it reads the primary's WAL position (`pg_current_wal_lsn()`) and
/// the replica's replayed one: the replica then holds every commit acknowledged before the
/// latest probe whose primary position it has replayed (`ReplicaLag`). A read goes to the
/// replica only when that moment is at most `maxLag` old and not before the caller's
/// `notBefore` (a player's own last write, so they always read it), and only while the
/// replica answered a probe within `answerWindow`; when the replica cannot be reached, or
/// a read on it fails for want of a server, the read runs on the primary at once and the
/// replica waits for the next good probe.
///
/// While the primary cannot be reached (it died; a replica is being promoted) the replica
/// is read as long as it has replayed all it received: with synchronous replication that
/// holds every acknowledged commit, the newest data there is.
///
/// A read that must show every commit anyone has seen (`everyCommit`: a bot's account
/// after a fill made by another process) goes to the replica only while the primary's
/// latest probe found it acknowledging commits once a synchronous standby has applied them
/// (`synchronous_commit = remote_apply` with `synchronous_standby_names` set), or when the
/// replica is itself the primary now; else to the primary. Such a replica holds the
/// caller's own writes too, so `notBefore` sends no read to the primary while it lasts:
/// through a failover a player whose writes are failing still reads the replica.
public final class PostgresReplicaRouter: Service, Sendable {
    public struct Settings: Sendable {
        /// How far behind the primary the replica may be and still be read.
        public var maxLag: Duration = .seconds(1)
        /// How often positions are compared.
        public var probeInterval: Duration = .milliseconds(100)
        public init() {}
    }

    /// Where the reads went, for metrics.
    public struct Statistics: Sendable, Equatable {
        public var replicaReads = 0
        /// Reads the replica could have served but for its lag, its state or a failure.
        public var primaryReads = 0
        /// Reads that must show every acknowledged commit (`everyCommit`), by where they ran.
        public var everyCommitReplicaReads = 0
        public var everyCommitPrimaryReads = 0
        public var fallbacks = 0
        /// How long ago the replica was last known to be current; nil before the first good
        /// probe and after a failed one.
        public var lag: Duration?
    }

    public let primary: PostgresConnectionPool
    public let replica: PostgresConnectionPool?
    let settings: Settings
    let logger: Logger
    private struct State {
        var lag = ReplicaLag()
        var statistics = Statistics()
        /// When the primary last told its position.
        var primaryAnswered: ContinuousClock.Instant?
        /// When the replica last answered a probe.
        var replicaAnswered: ContinuousClock.Instant?
        /// When a read on the replica last failed: probes asked before then do not count.
        var replicaFailed: ContinuousClock.Instant?
    }

    /// How long a replica that stopped answering probes is still read: a connection that
    /// hangs rather than fails (a node going away behind a balancer) takes reads with it
    /// for at most this long.
    var answerWindow: Duration { max(settings.probeInterval * 5, .milliseconds(500)) }

    /// How long a primary that answered before may go without answering before the
    /// replica is read as the newest data there is: half the allowed lag (at least three
    /// probes), so that when the primary dies its last position is not yet too old, and no
    /// read is sent to the dead primary in between.
    var primarySilence: Duration { max(settings.maxLag / 2, settings.probeInterval * 3) }

    private func usable(_ state: State, at now: ContinuousClock.Instant, notBefore: ContinuousClock.Instant?) -> Bool {
        guard let answered = state.replicaAnswered, now - answered <= answerWindow else { return false }
        return state.lag.usable(at: now, maxLag: settings.maxLag, notBefore: notBefore)
    }

    private let state = Mutex(State())

    public init(primary: PostgresConnectionPool, replica: PostgresConnectionPool?, settings: Settings = .init(), logger: Logger) {
        self.primary = primary
        self.replica = replica
        self.settings = settings
        self.logger = logger
    }

    public var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.lag = state.lag.lag(at: .now)
            return statistics
        }
    }

    /// Runs `query` on the replica when it is fresh enough, else on the primary; with
    /// `everyCommit`, only while the replica is known to hold every acknowledged commit.
    public func query(
        _ query: PostgresQuery, notBefore: ContinuousClock.Instant? = nil, everyCommit: Bool = false
    ) async throws -> PostgresRows {
        try await route(notBefore: notBefore, everyCommit: everyCommit) { try await $0.query(query) }
    }

    /// Runs `body` in one read-only transaction on the replica when it is fresh enough,
    /// else on the primary; `body` may run twice (a replica failure, then the primary).
    public func withReadTransaction<T: Sendable>(
        notBefore: ContinuousClock.Instant? = nil, _ body: @Sendable @escaping (PostgresSession) async throws -> T
    ) async throws -> T {
        try await route(notBefore: notBefore, everyCommit: false) { pool in
            try await pool.withTransaction { session in
                try await session.runScript("SET TRANSACTION READ ONLY")
                return try await body(session)
            }
        }
    }

    private func route<T>(
        notBefore: ContinuousClock.Instant?, everyCommit: Bool, _ run: (PostgresConnectionPool) async throws -> T
    ) async throws -> T {
        guard let replica else { return try await run(primary) }
        let fresh = state.withLock { state in
            // A replica holding every commit holds the caller's own writes too.
            let fresh = everyCommit
                ? state.lag.holdsEveryCommit && usable(state, at: .now, notBefore: nil)
                : usable(state, at: .now, notBefore: notBefore)
            switch (everyCommit, fresh) {
            case (false, true): state.statistics.replicaReads += 1
            case (false, false): state.statistics.primaryReads += 1
            case (true, true): state.statistics.everyCommitReplicaReads += 1
            case (true, false): state.statistics.everyCommitPrimaryReads += 1
            }
            return fresh
        }
        guard fresh else { return try await run(primary) }
        do {
            return try await run(replica)
        } catch let error as PostgresError where Self.wantsAnotherServer(error) {
            state.withLock {
                $0.lag.replicaFailed()
                $0.replicaFailed = .now
                $0.statistics.fallbacks += 1
            }
            logger.warning("a replica read failed; reading the primary", metadata: ["error": "\(error)"])
            return try await run(primary)
        }
    }

    /// Failures that say nothing about the statement: no connection, a server shutting
    /// down or starting, a query cancelled by a conflict with recovery (40001), a server
    /// short of resources. A statement that ran out of time (57014) would only run out of
    /// time again.
    static func wantsAnotherServer(_ error: PostgresError) -> Bool {
        error.isConnectionFailure || error.isTransient || error.code?.errorClass == "53"
    }

    public func run() async throws {
        guard let replica else { return }
        // Two loops, so that a primary slow to answer (a failover, a pooler waiting for a
        // server) holds up neither the replica's probes nor more than one connection.
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    while !Task.isCancelled {
                        await self.probePrimary()
                        try? await Task.sleep(for: self.settings.probeInterval)
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        await self.probeReplica(replica)
                        try? await Task.sleep(for: self.settings.probeInterval)
                    }
                }
            }
        }
    }

    /// One comparison of the primary's position with the replica's, now (`run()` makes
    /// one every `probeInterval`).
    public func probe(_ replica: PostgresConnectionPool) async {
        await probePrimary()
        await probeReplica(replica)
    }

    /// Notes the primary's WAL position and when it was asked for, and whether it waits for
    /// a synchronous standby to apply each commit before acknowledging it.
    func probePrimary() async {
        let asked = ContinuousClock.now
        guard let row = try? await primary.query(
            """
            SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8,
                   current_setting('synchronous_commit') = 'remote_apply' AND current_setting('synchronous_standby_names') <> ''
            WHERE NOT pg_is_in_recovery()
            """
        ).first, let position = try? row.decode(Int64.self, column: 0),
              let synchronous = try? row.decode(Bool.self, column: 1) else { return }
        state.withLock {
            $0.lag.primary(at: asked, position: position, waitsForApply: synchronous)
            $0.primaryAnswered = .now
        }
    }

    /// Notes how far the replica has replayed.
    func probeReplica(_ replica: PostgresConnectionPool) async {
        let asked = ContinuousClock.now
        let replicaState: (recovering: Bool, replayed: Int64?, received: Int64?)?
        do {
            let row = try await replica.query(
                """
                SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8,
                       (pg_last_wal_receive_lsn() - '0/0'::pg_lsn)::int8
                """
            ).first
            replicaState = try row.map { (try $0.decode(Bool.self, column: 0), try $0.decode(Int64?.self, column: 1), try $0.decode(Int64?.self, column: 2)) }
        } catch {
            replicaState = nil
        }
        let (wasUsable, isUsable) = state.withLock { state in
            let wasUsable = usable(state, at: .now, notBefore: nil)
            if let failed = state.replicaFailed, asked < failed {
                return (wasUsable, wasUsable)
            }
            if replicaState != nil { state.replicaAnswered = .now }
            // Silent: it answered before, and not for a while (not merely slower than a probe).
            let primarySilent = state.primaryAnswered.map { asked - $0 > primarySilence } ?? false
            if let replicaState, !replicaState.recovering {
                // Not a standby (promoted, or the same server): it is current.
                state.lag.current(at: asked, promoted: true)
            } else if let replicaState, let replayed = replicaState.replayed {
                state.lag.replica(replayed: replayed)
                // The primary is gone: the replica has all it received, every acknowledged
                // commit when it was the synchronous one, the newest data there is.
                if primarySilent, let received = replicaState.received, replayed >= received {
                    state.lag.current(at: asked)
                }
            } else {
                state.lag.replicaFailed()
            }
            return (wasUsable, usable(state, at: .now, notBefore: nil))
        }
        if wasUsable != isUsable {
            logger.notice(isUsable ? "reading from the replica" : "the replica is behind or unreachable; reading from the primary")
        }
    }
}

/// How far a replica has come: the latest moment such that every commit the primary
/// acknowledged before it is on the replica.
struct ReplicaLag: Sendable {
    /// Primary WAL positions and when they were asked for, oldest first, not yet replayed.
    private(set) var positions: [(at: ContinuousClock.Instant, position: Int64)] = []
    private(set) var caughtUpTo: ContinuousClock.Instant?
    /// The primary said at its latest probe that it acknowledges a commit only once a
    /// synchronous standby has applied it.
    private(set) var primaryWaitsForApply = false
    /// The replica said at its latest probe that it is no standby (promoted, or the same server).
    private(set) var replicaIsPrimary = false

    /// Whether the replica holds every commit the primary has acknowledged, however recent.
    var holdsEveryCommit: Bool { primaryWaitsForApply || replicaIsPrimary }

    /// The primary had written `position` by `at` (the moment the question was sent), and
    /// acknowledges commits once a synchronous standby has applied them, or not.
    mutating func primary(at: ContinuousClock.Instant, position: Int64, waitsForApply: Bool = false) {
        primaryWaitsForApply = waitsForApply
        positions.append((at, position))
        if positions.count > 1024 { positions.removeFirst(positions.count - 1024) }
    }

    /// The replica, a standby, has replayed up to `replayed`.
    mutating func replica(replayed: Int64) {
        replicaIsPrimary = false
        while let first = positions.first, first.position <= replayed {
            caughtUpTo = max(caughtUpTo ?? first.at, first.at)
            positions.removeFirst()
        }
    }

    /// The replica holds everything there is as of `at`; `promoted`: it is no standby.
    mutating func current(at: ContinuousClock.Instant, promoted: Bool = false) {
        if promoted { replicaIsPrimary = true }
        positions.removeAll { $0.at <= at }
        caughtUpTo = max(caughtUpTo ?? at, at)
    }

    /// The replica could not be reached: it is not read until a probe finds it again.
    mutating func replicaFailed() {
        caughtUpTo = nil
        replicaIsPrimary = false
    }

    func lag(at now: ContinuousClock.Instant) -> Duration? {
        caughtUpTo.map { now - $0 }
    }

    /// Whether a read may run on the replica: it is at most `maxLag` behind and holds the
    /// caller's own writes (those acknowledged by `notBefore`). A replica holding every
    /// acknowledged commit holds them whenever they were made, so a player whose write a
    /// moment ago failed with the primary (a failover) still reads the replica.
    func usable(at now: ContinuousClock.Instant, maxLag: Duration, notBefore: ContinuousClock.Instant?) -> Bool {
        guard let caughtUpTo, now - caughtUpTo <= maxLag else { return false }
        return holdsEveryCommit || notBefore.map { caughtUpTo >= $0 } ?? true
    }
}
