import Hummingbird
import Postgres
import Synchronization

/// Reads that may be a little stale — market lists, charts, leaderboards, analytics,
/// market data for bots — go through this: to the replica (`DATABASE_REPLICA_URL`) while
/// it keeps within `REPLICA_MAX_LAG_MS` and has the calling player's own last write, to the
/// primary otherwise (`PostgresReplicaRouter`). Without a replica it is the primary pool.
///
/// `everyCommit` is for a bot's polls of its own money (`/v2/account`, `/v2/positions`):
/// the replica answers them only while it holds every acknowledged commit, however recent
/// (the primary acknowledges each only once the synchronous standby has applied it), so a
/// fill made by any process, the matcher's included, is there when the bot next asks.
struct StaleReads: Sendable {
    let pool: PostgresConnectionPool
    var router: PostgresReplicaRouter? = nil

    func query(_ query: PostgresQuery, everyCommit: Bool = false) async throws -> PostgresRows {
        guard let router else { return try await pool.query(query) }
        return try await router.query(query, notBefore: PlayerWrites.notBefore, everyCommit: everyCommit)
    }
}

/// When each player last changed something through this process, so their reads go to
/// the primary until the replica has caught up with it. Across processes the synchronous
/// replica's `synchronous_commit = remote_apply` gives the same promise (docs/SCALING.md).
final class PlayerWrites: Sendable {
    /// The request's player's last write, while a request runs.
    @TaskLocal static var notBefore: ContinuousClock.Instant?

    /// A write older than this can no longer matter: the replica is only read while its
    /// lag is below it.
    let horizon: Duration
    private let writes = Mutex([Int: ContinuousClock.Instant]())

    init(horizon: Duration) {
        self.horizon = horizon
    }

    func wrote(userID: Int, at now: ContinuousClock.Instant = .now) {
        writes.withLock { writes in
            writes[userID] = now
            if writes.count > 4096 { writes = writes.filter { now - $0.value <= horizon } }
        }
    }

    func lastWrite(userID: Int, at now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant? {
        writes.withLock { $0[userID] }.flatMap { now - $0 <= horizon ? $0 : nil }
    }
}

/// Runs a player's reads with their last write as the floor for replica reads, and
/// notes each request that may have written (any method but GET and HEAD) once it is answered.
struct PlayerWritesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let writes: PlayerWrites

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let userID = context.identity?.userID else { return try await next(request, context) }
        if request.method == .get || request.method == .head {
            return try await PlayerWrites.$notBefore.withValue(writes.lastWrite(userID: userID)) {
                try await next(request, context)
            }
        }
        defer { writes.wrote(userID: userID) }
        return try await next(request, context)
    }
}
