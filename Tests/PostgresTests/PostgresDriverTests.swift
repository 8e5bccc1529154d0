import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif
@testable import Postgres
import Testing
import TestSupport

@Suite("Postgres driver")
struct PostgresDriverTests {
    @Test("every supported type round-trips, NULL included")
    func typesRoundTrip() async throws {
        try await TemporaryDatabase.withPool { pool in
            try await pool.query(
                """
                CREATE TABLE samples (
                    big int8, small int4, tiny int2, flag bool, label text, amount numeric,
                    at timestamptz, blob bytea, maybe int8
                )
                """
            )
            let amount = Decimal(string: "12345678901234567890.123456789")!
            let at = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let blob = Data([0, 1, 2, 0xfe, 0xff, 0])
            let none: Int? = nil
            try await pool.query(
                """
                INSERT INTO samples VALUES (\(Int.max), \(Int32.min), \(Int16(-7)), \(true), \("héllo ✓ 'quoted'"),
                    \(amount), \(at), \(blob), \(none as Int?))
                """
            )
            let row = try #require(try await pool.query("SELECT * FROM samples").first)
            let decoded = try row.decode((Int, Int32, Int16, Bool, String, Decimal, Date, Data, Int?).self)
            #expect(decoded.0 == Int.max)
            #expect(decoded.1 == Int32.min)
            #expect(decoded.2 == -7)
            #expect(decoded.3 == true)
            #expect(decoded.4 == "héllo ✓ 'quoted'")
            #expect(decoded.5 == amount)
            #expect(abs(decoded.6.timeIntervalSince(at)) < 0.000_001)
            #expect(decoded.7 == blob)
            #expect(decoded.8 == nil)
            #expect(try row.decode(String.self, column: "label") == "héllo ✓ 'quoted'")
        }
    }

    @Test("NUMERIC keeps every digit", arguments: [
        "12345678901234567890.12", "-98765432109876543210", "0.000000000000000000001", "0.3", "1e-3",
    ])
    func numericIsExact(_ text: String) async throws {
        try await TemporaryDatabase.withPool { pool in
            let value = Decimal(string: text)!
            let rows = try await pool.query("SELECT \(value)::numeric, (\(value)::numeric)::text")
            let (decoded, serverText) = try #require(try rows.decode((Decimal, String).self).first)
            #expect(decoded == value)
            #expect(Decimal(string: serverText) == value)
        }
    }

    @Test("NUMERIC's text read the quick way is the value, printed the same as Foundation's parser reads it")
    func plainNumerics() async throws {
        let texts = ["0", "0.00", "-0.00", "1", "100", "100.00", "1.10", "-1.1000", "123456789012345678", "-0.000001",
                     "999999999999.999999", "12.3456789012", "5000.0000000000", "-0.5", "0.0100", "101.0000"]
        try await TemporaryDatabase.withPool { pool in
            let rows = try await pool.query("SELECT t::numeric FROM unnest(\(texts)::text[]) t").decodeColumn(Decimal.self)
            for (text, decoded) in zip(texts, rows) {
                let parsed = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
                #expect(decoded == parsed && "\(decoded)" == "\(parsed)" && "\(decoded * 3 + 1)" == "\(parsed * 3 + 1)", "\(text)")
            }
        }
        // Past 18 digits, or anything but digits, a sign and a point: the general parser.
        for text in ["1234567890123456789", "0.1234567890123456789", "1e5", "NaN", "", "-", "1.2.3", "+1"] {
            #expect(Decimal.plainNumeric(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(Decimal.plainNumeric(Array("-12.50".utf8)) == Decimal(string: "-12.5"))
    }

    @Test("0.1 × 3 is exactly 0.3")
    func decimalArithmetic() async throws {
        try await TemporaryDatabase.withPool { pool in
            let price = Decimal(string: "0.1")!
            let total = try await pool.query("SELECT \(price) * 3").decodeColumn(Decimal.self)
            #expect(total == [Decimal(string: "0.3")!])
        }
    }

    @Test("decoding into the wrong type or NULL into a non-optional names the column")
    func decodingErrors() async throws {
        try await TemporaryDatabase.withPool { pool in
            let row = try #require(try await pool.query("SELECT 'abc'::text AS label, NULL::int8 AS missing").first)
            let mismatch = try #require(throws: PostgresError.self) { try row.decode(Int.self, column: 0) }
            #expect(mismatch.kind == .decoding)
            #expect(mismatch.message.contains("label"))
            #expect(mismatch.message.contains("text"))
            let null = try #require(throws: PostgresError.self) { try row.decode(Int.self, column: "missing") }
            #expect(null.message.contains("NULL"))
            #expect(try row.decode(Int?.self, column: 1) == nil)
            #expect(throws: PostgresError.self) { try row.decode((Int, Int).self) }
        }
    }

    @Test("a unique violation surfaces as SQLSTATE 23505 without leaking the value")
    func uniqueViolation() async throws {
        try await TemporaryDatabase.withPool { pool in
            try await pool.query("CREATE TABLE users (name text CONSTRAINT users_name_key UNIQUE)")
            try await pool.query("INSERT INTO users VALUES (\("secret-value-123"))")
            let error = try await #require(throws: PostgresError.self) {
                try await pool.query("INSERT INTO users VALUES (\("secret-value-123"))")
            }
            #expect(error.code == .uniqueViolation)
            #expect(error.kind == .server)
            #expect(error.constraint == "users_name_key")
            #expect(!"\(error)".contains("secret-value-123"))
            #expect(!error.localizedDescription.contains("secret-value-123"))
            // Not in the log either: the value stays in `detail` for code that needs it.
            #expect(!error.logDescription.contains("secret-value-123"))
            #expect(error.detail?.contains("secret-value-123") == true)
            // The connection stays usable after a server error.
            #expect(try await pool.query("SELECT count(*) FROM users").decodeColumn(Int.self) == [1])
        }
    }

    @Test("a transaction rolls back when its body throws")
    func rollbackOnThrow() async throws {
        struct Abort: Error {}
        try await TemporaryDatabase.withPool { pool in
            try await pool.query("CREATE TABLE items (id int8)")
            await #expect(throws: Abort.self) {
                try await pool.withTransaction { session in
                    try await session.execute("INSERT INTO items VALUES (1), (2)")
                    throw Abort()
                }
            }
            #expect(try await pool.query("SELECT count(*) FROM items").decodeColumn(Int.self) == [0])
            let inserted = try await pool.withTransaction { try await $0.execute("INSERT INTO items VALUES (3)") }
            #expect(inserted == 1)
            #expect(try await pool.query("SELECT id FROM items").decodeColumn(Int.self) == [3])
        }
    }

    @Test("SQL-looking input is stored as data")
    func injectionIsData() async throws {
        try await TemporaryDatabase.withPool { pool in
            try await pool.query("CREATE TABLE x (value text)")
            let hostile = "'); DROP TABLE x; --"
            try await pool.query("INSERT INTO x VALUES (\(hostile))")
            #expect(try await pool.query("SELECT value FROM x WHERE value = \(hostile)").decodeColumn(String.self) == [hostile])
            let withNul = "a\u{0}b"
            let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT \(withNul)") }
            #expect(error.kind == .encoding)
            #expect(try await pool.query("SELECT count(*) FROM x").decodeColumn(Int.self) == [1])
        }
    }

    @Test("a statement is prepared once per connection and reused")
    func preparedStatementsAreReused() async throws {
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 1 }) { pool in
            try await pool.withConnection { session in
                for value in 1...5 {
                    #expect(try await session.query("SELECT \(value) * 2").decodeColumn(Int.self) == [value * 2])
                }
                let prepared = try await session.query(
                    "SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1 * 2'"
                ).decodeColumn(Int.self)
                #expect(prepared == [1])
            }
        }
    }

    @Test("a statement run fewer times than the prepare threshold is never prepared")
    func oneOffStatementsAreNotPrepared() async throws {
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 1; $0.prepareThreshold = 3 }) { pool in
            try await pool.withConnection { session throws in
                for value in 1...2 {
                    #expect(try await session.query("SELECT \(value) + 40").decodeColumn(Int.self) == [value + 40])
                }
                #expect(try await Self.prepared(on: session, statement: "SELECT $1 + 40") == 0)
                #expect(try await session.query("SELECT \(3) + 40").decodeColumn(Int.self) == [43])
                #expect(try await Self.prepared(on: session, statement: "SELECT $1 + 40") == 1)
            }
        }
    }

    @Test("1,000 distinct statements keep the connection healthy and its prepared statements at the bound")
    func statementCacheIsBounded() async throws {
        let capacity = 16
        try await TemporaryDatabase.withPool(configure: {
            $0.maxConnections = 1
            $0.statementCacheCapacity = capacity
            $0.prepareThreshold = 2
        }) { pool in
            try await pool.withConnection { session throws in
                for index in 0..<1_000 {
                    // Each statement twice, so each reaches the threshold and is prepared.
                    for _ in 0..<2 {
                        let rows = try await session.query("SELECT \(unescaped: String(index)) + \(1)::int8")
                        #expect(try rows.decodeColumn(Int.self) == [index + 1])
                    }
                    if index % 100 == 99 { #expect(try await Self.prepared(on: session) <= capacity + 1) }
                }
                // The oldest were deallocated; the newest still run, as prepared statements.
                #expect(try await Self.prepared(on: session) <= capacity + 1)
                #expect(try await Self.prepared(on: session, statement: "SELECT 999 + $1::int8") == 1)
                #expect(try await session.query("SELECT \(unescaped: "0") + \(1)::int8").decodeColumn(Int.self) == [1])
            }
            #expect(pool.statistics.connections == 1)
        }
    }

    /// Statements prepared on the session's connection (those with this text, if given).
    private static func prepared(on session: PostgresSession, statement: String? = nil) async throws -> Int {
        try await session.query(
            "SELECT count(*) FROM pg_prepared_statements WHERE \(statement)::text IS NULL OR statement = \(statement)::text"
        ).decodeColumn(Int.self)[0]
    }

    @Test("a query interpolates fragments: their parameters join in order and are renumbered")
    func queryFragments() async throws {
        let lower: PostgresQuery = "n >= \(2)"
        let upper: PostgresQuery = "n <= \(4)"
        let both = PostgresQuery.joined([lower, upper], separator: " AND ")
        let query: PostgresQuery = "SELECT \("label:") || n FROM generate_series(1, \(10)) AS n WHERE \(both) ORDER BY n"
        #expect(query.sql == "SELECT $1 || n FROM generate_series(1, $2) AS n WHERE n >= $3 AND n <= $4 ORDER BY n")
        #expect(query.binds.count == 4)
        let nested: PostgresQuery = "SELECT count(*) FROM (\(query)) q WHERE \(true)"
        #expect(nested.sql.hasSuffix("ORDER BY n) q WHERE $5"))
        try await TemporaryDatabase.withPool { pool throws in
            #expect(try await pool.query(query).decodeColumn(String.self) == ["label:2", "label:3", "label:4"])
            #expect(try await pool.query(nested).decodeColumn(Int.self) == [3])
        }
    }

    @Test("text enums bind as their raw value and decode strictly")
    func stringEnums() async throws {
        enum Side: String, PostgresCodable { case buy, sell }
        try await TemporaryDatabase.withPool { pool throws in
            #expect(try await pool.query("SELECT \(Side.sell)::text").decodeColumn(Side.self) == [.sell])
            let error = await #expect(throws: PostgresError.self) {
                try await pool.query("SELECT 'hold'::text").decodeColumn(Side.self)
            }
            #expect(error?.kind == .decoding)
        }
    }

    @Test("a prepared statement invalidated by a schema change is prepared again without an error")
    func schemaChangeUnderPreparedStatement() async throws {
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 1 }) { pool in
            try await pool.query("CREATE TABLE t (a int8)")
            try await pool.query("INSERT INTO t VALUES (1)")
            #expect(try await pool.query("SELECT * FROM t").columns.count == 1)
            try await pool.query("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
            let rows = try await pool.query("SELECT * FROM t")
            #expect(try rows.decode((Int, String).self).map(\.1) == ["x"])
        }
    }

    @Test("array parameters work with ANY")
    func arrayParameters() async throws {
        try await TemporaryDatabase.withPool { pool in
            let symbols = ["AAPL", "BRK.B", "quote\"d", "back\\slash"]
            let echoed = try await pool.query("SELECT s FROM unnest(\(symbols)) AS s WHERE s = ANY(\(symbols))")
            #expect(try echoed.decodeColumn(String.self) == symbols)
            let ids = try await pool.query("SELECT 2 = ANY(\([1, 2, 3]))").decodeColumn(Bool.self)
            #expect(ids == [true])
        }
    }

    @Test("200 concurrent queries through a pool of 8 all succeed")
    func concurrentQueries() async throws {
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 8 }) { pool in
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        try await pool.query("SELECT \(index) + 1 FROM pg_sleep(0.005)").decodeColumn(Int.self)[0]
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.sorted() == Array(1...200))
            #expect(pool.statistics.connections <= 8)
            #expect(pool.statistics.inUse == 0)
        }
    }

    @Test("queries succeed after every pool connection's backend is terminated")
    func reconnectsAfterTermination() async throws {
        try await TemporaryDatabase.with { database in
            var configuration = database.configuration
            configuration.maxConnections = 4
            let pool = PostgresConnectionPool(configuration: configuration)
            try await runConcurrently(pool, count: 16)
            #expect(pool.statistics.connections == 4)

            let admin = TemporaryDatabase.adminPool()
            let killed = try await admin.query(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = \(database.name)"
            ).decodeColumn(Int.self)
            #expect(killed == [4])
            for _ in 0..<100 {
                let left = try await admin.query("SELECT count(*) FROM pg_stat_activity WHERE datname = \(database.name)")
                if try left.decodeColumn(Int.self) == [0] { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            await admin.close()

            try await runConcurrently(pool, count: 16)
            await pool.close()
        }
    }

    private func runConcurrently(_ pool: PostgresConnectionPool, count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask { _ = try await pool.query("SELECT 1 FROM pg_sleep(0.02)") }
            }
            try await group.waitForAll()
        }
    }

    @Test("a listener receives notifications, and after its backend is terminated listens again, reporting the gap")
    func listenerSurvivesTermination() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let listener = PostgresListener(
                pool: pool, channels: ["prices", "orders"], logger: Logger(label: "listener-test"),
                wait: .milliseconds(200), retryDelay: .milliseconds(50)
            )
            let (events, continuation) = AsyncStream.makeStream(of: PostgresListener.Event.self)
            let listening = Task { await listener.run { continuation.yield($0) } }
            var received = events.makeAsyncIterator()
            #expect(await received.next() == .listening(afterGap: false))
            try await pool.execute("SELECT pg_notify('prices', 'AAPL 187.50'), pg_notify('ignored', 'x'), pg_notify('orders', 'o1')")
            #expect(await received.next() == .notification(channel: "prices", payload: "AAPL 187.50"))
            #expect(await received.next() == .notification(channel: "orders", payload: "o1"))

            // A payload sent inside a transaction arrives only once it commits.
            try await pool.withTransaction { session in
                try await session.execute("SELECT pg_notify('orders', 'o2')")
            }
            #expect(await received.next() == .notification(channel: "orders", payload: "o2"))

            #expect(try await database.terminateListeners() == 1)
            #expect(await received.next() == .listening(afterGap: true))
            try await pool.execute("SELECT pg_notify('prices', 'after')")
            #expect(await received.next() == .notification(channel: "prices", payload: "after"))

            listening.cancel()
            await listening.value
            await pool.close()
        }
    }

    @Test("a statement over statement_timeout fails with 57014 and the connection stays usable")
    func statementTimeout() async throws {
        try await TemporaryDatabase.withPool(configure: {
            $0.maxConnections = 1
            $0.statementTimeout = .milliseconds(200)
        }) { pool in
            let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT pg_sleep(5)") }
            #expect(error.code == .queryCanceled)
            #expect(try await pool.query("SELECT 41 + 1").decodeColumn(Int.self) == [42])
        }
    }

    @Test("a transaction that hits a serialization failure is retried and commits")
    func serializationFailureIsRetried() async throws {
        // Under load both first attempts may abort and collide again; allow many rounds.
        try await TemporaryDatabase.withPool(configure: { $0.transactionAttempts = 20 }) { pool in
            try await pool.query("CREATE TABLE duty (doctor text, on_call bool)")
            try await pool.query("INSERT INTO duty VALUES ('alice', true), ('bob', true)")
            let meeting = Rendezvous(parties: 2)
            let attempts = Counter()
            // Write skew: each takes one doctor off call after checking the other is on call.
            func goOffCall(_ doctor: String) async throws {
                try await pool.withTransaction(.serializable) { session in
                    let attempt = await attempts.increment()
                    let onCall = try await session.query("SELECT count(*) FROM duty WHERE on_call").decodeColumn(Int.self)
                    if attempt <= 2 { await meeting.arrive() }
                    if onCall == [2] {
                        try await session.execute("UPDATE duty SET on_call = false WHERE doctor = \(doctor)")
                    }
                }
            }
            async let alice: Void = goOffCall("alice")
            async let bob: Void = goOffCall("bob")
            _ = try await (alice, bob)
            // Both ran once and at least one ran again (more if it retried while the
            // other was still committing); in the end exactly one doctor went off call.
            #expect(await attempts.value >= 3)
            let onCall = try await pool.query("SELECT count(*) FROM duty WHERE on_call").decodeColumn(Int.self)
            #expect(onCall == [1])
        }
    }

    @Test("COPY FROM STDIN loads 100,000 rows; a bad row stores nothing")
    func copyRows() async throws {
        try await TemporaryDatabase.withPool { pool in
            try await pool.query("CREATE TABLE bars (id int8 PRIMARY KEY, symbol text NOT NULL, close numeric NOT NULL)")
            let copied = try await pool.withConnection { session in
                try await session.copyFrom("COPY bars (id, symbol, close) FROM STDIN (FORMAT csv)") { writer in
                    for id in 1...100_000 {
                        try await writer.write("\(id),SYM\(id % 500),\(id).25\n")
                    }
                }
            }
            #expect(copied == 100_000)
            let (count, total) = try #require(
                try await pool.query("SELECT count(*), sum(close) FROM bars").decode((Int, Decimal).self).first
            )
            #expect(count == 100_000)
            #expect(total == Decimal(string: "5000075000")!)

            let error = try await #require(throws: PostgresError.self) {
                try await pool.withConnection { session in
                    try await session.copyFrom("COPY bars (id, symbol, close) FROM STDIN (FORMAT csv)") { writer in
                        try await writer.write("200001,OK,1.00\n200002,BAD,not-a-number\n")
                    }
                }
            }
            #expect(error.code == .invalidTextRepresentation)
            #expect(try await pool.query("SELECT count(*) FROM bars").decodeColumn(Int.self) == [100_000])
        }
    }

    @Test("an error thrown while writing COPY data aborts the copy")
    func copyAbort() async throws {
        struct Stop: Error {}
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 1 }) { pool in
            try await pool.query("CREATE TABLE t (v int8)")
            await #expect(throws: Stop.self) {
                try await pool.withConnection { session in
                    try await session.copyFrom("COPY t FROM STDIN") { writer in
                        try await writer.write("1\n2\n")
                        throw Stop()
                    }
                }
            }
            #expect(try await pool.query("SELECT count(*) FROM t").decodeColumn(Int.self) == [0])
        }
    }

    @Test("a caller waiting longer than the acquire timeout gets acquireTimeout")
    func acquireTimeout() async throws {
        try await TemporaryDatabase.withPool(configure: {
            $0.maxConnections = 1
            $0.acquireTimeout = .milliseconds(100)
        }) { pool in
            let leased = Rendezvous(parties: 2)
            async let holder: Void = pool.withConnection { session in
                await leased.arrive()
                _ = try await session.query("SELECT pg_sleep(0.5)")
            }
            await leased.arrive()
            let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
            #expect(error.kind == .acquireTimeout)
            try await holder
            #expect(try await pool.query("SELECT 1").decodeColumn(Int.self) == [1])
        }
    }

    @Test("connects with a postgresql:// URI")
    func connectsWithURI() async throws {
        try await TemporaryDatabase.with { database in
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let (socket, port) = try #require(
                try await pool.query("SELECT current_setting('unix_socket_directories'), current_setting('port')")
                    .decode((String, String).self).first
            )
            await pool.close()
            let host = socket.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let uri = "postgresql://postgres@:\(port)/\(database.name)?host=\(host)&application_name=uri-test"
            let uriPool = PostgresConnectionPool(configuration: PostgresConfiguration(connectionString: uri))
            let name = try await uriPool.query("SELECT current_setting('application_name')").decodeColumn(String.self)
            #expect(name == ["uri-test"])
            let timezone = try await uriPool.query("SELECT current_setting('TimeZone')").decodeColumn(String.self)
            #expect(timezone == ["UTC"])
            await uriPool.close()
        }
    }

    @Test("tasks running on the pool's executor query concurrently and outlive the pool")
    func poolExecutor() async throws {
        try await TemporaryDatabase.withPool(configure: { $0.maxConnections = 4 }) { pool in
            let sums = try await withThrowingTaskGroup(of: Int.self) { group in
                for task in 0..<16 {
                    group.addTask(executorPreference: pool.executor) {
                        var sum = 0
                        for step in 0..<20 {
                            sum += try await pool.query("SELECT \(task * 100 + step)").decodeColumn(Int.self)[0]
                        }
                        return sum
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(sums.sorted() == (0..<16).map { task in (0..<20).reduce(0) { $0 + task * 100 + $1 } })
        }
    }

    @Test("opening a connection gives up after connect_timeout when the server never answers")
    func connectTimeout() async throws {
        let listener = try SilentListener()
        var configuration = PostgresConfiguration(connectionString: "host=127.0.0.1 port=\(listener.port) dbname=x")
        configuration.connectTimeoutSeconds = 1
        let pool = PostgresConnectionPool(configuration: configuration)
        let started = ContinuousClock.now
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        let elapsed = ContinuousClock.now - started
        #expect(error.kind == .connection)
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(3))
        await pool.close()
        listener.close()
    }

    @Test("an unreachable server fails fast with a connection error")
    func unreachableServer() async throws {
        var configuration = PostgresConfiguration(connectionString: "host=/nonexistent/socket/dir port=1 dbname=x")
        configuration.connectTimeoutSeconds = 2
        let pool = PostgresConnectionPool(configuration: configuration)
        let started = ContinuousClock.now
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(error.kind == .connection)
        #expect(error.isConnectionFailure)
        #expect(ContinuousClock.now - started < .seconds(3))
        await pool.close()
    }
}

/// A loopback TCP port whose connections are accepted by the kernel and never answered.
struct SilentListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw PostgresError(kind: .connection, message: "listen failed") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}

/// Lets `parties` tasks wait for one another.
actor Rendezvous {
    private let parties: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(parties: Int) { self.parties = parties }

    func arrive() async {
        if waiting.count + 1 == parties {
            waiting.forEach { $0.resume() }
            waiting = []
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}

actor Counter {
    private(set) var value = 0

    func increment() -> Int {
        value += 1
        return value
    }
}
