import Foundation
import Logging
@testable import Postgres
import Testing
import TestSupport

@Suite("Replica reads and transaction pooling")
struct ReplicaRouterTests {
    private static let start = ContinuousClock.now
    private static func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("the replica holds every commit acknowledged before the last primary position it replayed")
    func lagFollowsReplayedPositions() {
        var lag = ReplicaLag()
        #expect(!lag.usable(at: Self.at(0), maxLag: .seconds(1), notBefore: nil), "never probed: not read")
        lag.primary(at: Self.at(0), position: 100)
        lag.primary(at: Self.at(100), position: 200)
        lag.primary(at: Self.at(200), position: 300)
        lag.replica(replayed: 250)
        #expect(lag.caughtUpTo == Self.at(100))
        #expect(lag.lag(at: Self.at(300)) == .milliseconds(200))
        #expect(lag.usable(at: Self.at(300), maxLag: .seconds(1), notBefore: nil))
        // A player who wrote after the replica's moment reads the primary; one who wrote before, the replica.
        #expect(!lag.usable(at: Self.at(300), maxLag: .seconds(1), notBefore: Self.at(150)))
        #expect(lag.usable(at: Self.at(300), maxLag: .seconds(1), notBefore: Self.at(50)))
        // Falling behind: no replay for longer than the allowed lag.
        #expect(!lag.usable(at: Self.at(1_101), maxLag: .seconds(1), notBefore: nil))
        lag.replica(replayed: 300)
        #expect(lag.caughtUpTo == Self.at(200))
        #expect(lag.positions.isEmpty)
    }

    @Test("an idle primary keeps the replica current; a failed probe stops its reads until a good one")
    func idleAndFailed() {
        var lag = ReplicaLag()
        for step in 0..<20 { lag.primary(at: Self.at(step * 100), position: 500) }
        lag.replica(replayed: 500)
        #expect(lag.caughtUpTo == Self.at(1_900))
        lag.replicaFailed()
        #expect(!lag.usable(at: Self.at(1_950), maxLag: .seconds(1), notBefore: nil))
        lag.primary(at: Self.at(2_000), position: 600)
        lag.replica(replayed: 600)
        #expect(lag.usable(at: Self.at(2_050), maxLag: .seconds(1), notBefore: nil))
        lag.current(at: Self.at(3_000))
        #expect(lag.caughtUpTo == Self.at(3_000))
    }

    @Test("a standby holds every acknowledged commit only while the primary waits for it to apply each one, or once promoted")
    func everyCommit() {
        var lag = ReplicaLag()
        lag.primary(at: Self.at(0), position: 100, waitsForApply: false)
        lag.replica(replayed: 100)
        #expect(lag.usable(at: Self.at(50), maxLag: .seconds(1), notBefore: nil), "current enough for a stale-tolerant read")
        #expect(!lag.holdsEveryCommit, "asynchronous: a commit after the probe may be missing")
        #expect(!lag.usable(at: Self.at(50), maxLag: .seconds(1), notBefore: Self.at(40)), "a player's write after the probe may be missing")
        lag.primary(at: Self.at(100), position: 200, waitsForApply: true)
        lag.replica(replayed: 200)
        #expect(lag.holdsEveryCommit)
        // Every acknowledged commit, the player's own too, however recent: read on the replica.
        #expect(lag.usable(at: Self.at(150), maxLag: .seconds(1), notBefore: Self.at(140)))
        // Patroni drops the standby from synchronous_standby_names: the next probe says so.
        lag.primary(at: Self.at(200), position: 300, waitsForApply: false)
        #expect(!lag.holdsEveryCommit)
        // Promoted (or the primary itself): nothing is acknowledged elsewhere.
        lag.current(at: Self.at(300), promoted: true)
        #expect(lag.holdsEveryCommit)
        lag.replicaFailed()
        #expect(!lag.holdsEveryCommit)
    }

    @Test("reads go to a current replica, and to the primary at once when the replica cannot be reached")
    func routing() async throws {
        try await TemporaryDatabase.with { database in
            try await database.withPool { primary in
                try await primary.query("CREATE TABLE marks (server text)")
                try await primary.query("INSERT INTO marks VALUES ('primary')")
                // The same database stands in for a replica: not in recovery, so it is current.
                try await database.withPool { replica in
                    let router = PostgresReplicaRouter(primary: primary, replica: replica, logger: Logger(label: "test"))
                    #expect(try await router.query("SELECT count(*) FROM marks").decodeColumn(Int.self) == [1])
                    #expect(router.statistics.primaryReads == 1, "before the first probe the replica is not read")
                    await router.probe(replica)
                    #expect(try await router.query("SELECT count(*) FROM marks").decodeColumn(Int.self) == [1])
                    let read = try await router.withReadTransaction { session in
                        try await session.query("SELECT current_setting('transaction_read_only')").decodeColumn(String.self)
                    }
                    #expect(read == ["on"])
                    // A replica that is no standby holds every commit: a bot's account is read there too.
                    #expect(try await router.query("SELECT count(*) FROM marks", everyCommit: true).decodeColumn(Int.self) == [1])
                    #expect(router.statistics.everyCommitReplicaReads == 1)
                    #expect(router.statistics.replicaReads == 2)
                    #expect(router.statistics.lag != nil)
                    // A replica whose probes stop answering (a connection hanging behind a
                    // balancer) is not read once the answer window has passed.
                    try await Task.sleep(for: router.answerWindow + .milliseconds(100))
                    #expect(try await router.query("SELECT count(*) FROM marks").decodeColumn(Int.self) == [1])
                    #expect(router.statistics.primaryReads == 2)
                }
            }
            // A replica nobody listens on: the read is answered by the primary, and the
            // replica is not tried again until a probe finds it.
            try await database.withPool { primary in
                var unreachable = PostgresConfiguration(connectionString: "host=127.0.0.1 port=1 dbname=nothing")
                unreachable.connectTimeoutSeconds = 1
                let replica = PostgresConnectionPool(configuration: unreachable)
                let router = PostgresReplicaRouter(primary: primary, replica: replica, logger: Logger(label: "test"))
                await router.probe(replica)
                let answered = try await router.query("SELECT 1").decodeColumn(Int.self)
                await replica.close()
                #expect(answered == [1])
                #expect(router.statistics.replicaReads == 0)
                #expect(router.statistics.primaryReads == 1)
                #expect(router.statistics.lag == nil)
            }
        }
    }

    @Test("in transaction pool mode nothing is prepared, no options are sent, and a server in another time zone is refused")
    func transactionPoolMode() async throws {
        try await TemporaryDatabase.with { database in
            // What a pooler's database entry would set (pgbouncer's timezone=UTC datestyle=ISO).
            try await database.withPool { pool throws in
                try await pool.query("ALTER DATABASE \(unescaped: database.name) SET timezone = 'UTC'")
            }
            try await database.withPool(configure: {
                $0.poolMode = .transaction
                $0.maxConnections = 1
                $0.prepareThreshold = 1
            }) { pool throws in
                for _ in 0..<10 {
                    #expect(try await pool.query("SELECT \(41) + 1").decodeColumn(Int.self) == [42])
                }
                #expect(try await pool.query("SELECT count(*) FROM pg_prepared_statements").decodeColumn(Int.self) == [0])
                // The 30 s statement timeout travels in `options`, which a transaction pooler refuses.
                #expect(try await pool.query("SHOW statement_timeout").decodeColumn(String.self) == ["0"])
            }
            try await database.withPool { pool throws in
                try await pool.query("ALTER DATABASE \(unescaped: database.name) SET timezone = 'Europe/Paris'")
            }
            // Session mode sets the time zone itself; transaction mode takes the server's and refuses it.
            try await database.withPool { pool throws in
                #expect(try await pool.query("SHOW TimeZone").decodeColumn(String.self) == ["UTC"])
            }
            let error = await #expect(throws: PostgresError.self) {
                try await database.withPool(configure: { $0.poolMode = .transaction }) { pool in
                    try await pool.query("SELECT 1")
                }
            }
            #expect(error?.kind == .connection)
            #expect(error?.message.contains("TimeZone Europe/Paris") == true)
        }
    }
}
