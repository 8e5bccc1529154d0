/// How to reach PostgreSQL and how the pool behaves.
public struct PostgresConfiguration: Sendable {
    /// A libpq conninfo string (`host=/run dbname=app`) or URI
    /// (`postgresql://user@host:5432/app`); empty means libpq's `PG*` environment defaults.
    public var connectionString: String
    /// Connection parameters that win over the connection string, e.g. `["dbname": "test_1"]`.
    public var overrides: [String: String] = [:]
    public var applicationName = "mockstock"
    /// Seconds an open attempt may take, enforced by the driver (at least 1 s) and also
    /// sent as libpq's `connect_timeout`.
    public var connectTimeoutSeconds = 5
    /// Server-side limit for one statement; `nil` keeps the server's setting.
    public var statementTimeout: Duration? = .seconds(30)
    /// Connections the pool opens at most.
    public var maxConnections = 8
    /// How long a caller waits for a free connection before `acquireTimeout` is thrown.
    public var acquireTimeout: Duration = .seconds(5)
    /// Prepared statements kept per connection; preparing one more deallocates the least
    /// recently used. 0 runs every statement unprepared.
    public var statementCacheCapacity = 256
    /// Runs of a statement after which it is prepared (one-off statements never are).
    public var prepareThreshold = 5
    /// How often a transaction is run again after a serialization failure or deadlock.
    public var transactionAttempts = 5
    /// What kind of server the connections reach: PostgreSQL itself, or a pooler that
    /// hands each transaction a server connection of its own.
    public var poolMode: PoolMode = .session

    /// A connection's server, as far as session state goes.
    public enum PoolMode: String, Sendable, CaseIterable {
        /// PostgreSQL, or a pooler in session mode: the connection keeps its session, so
        /// statements are prepared under names (`statementCacheCapacity`) and the session's
        /// settings travel as the startup packet's `options`.
        case session
        /// A pooler in transaction mode (pgbouncer's `pool_mode = transaction`): one
        /// transaction's statements share a server connection, the next may get another. Every
        /// statement runs unnamed (parsed, bound and run in one exchange, so it never
        /// refers to a statement another server connection prepared), and no `options` are
        /// sent, since such a pooler refuses them: the pooler sets `TimeZone` and `DateStyle`
        /// on its server connections (pgbouncer's `timezone=`/`datestyle=` database settings),
        /// the database role its `statement_timeout`. A connection whose server reports any
        /// other `TimeZone` or `DateStyle` is refused. Session state (`LISTEN`, session
        /// advisory locks, migrations) needs a direct connection: a pool in session mode.
        case transaction
    }

    /// Prepared statements kept per connection, as the pool mode allows.
    var effectiveStatementCacheCapacity: Int { poolMode == .transaction ? 0 : statementCacheCapacity }

    public init(connectionString: String) {
        self.connectionString = connectionString
    }

    /// The keyword/value pairs handed to `PQconnectStartParams`: the parsed connection string
    /// with the overrides applied and the driver's session settings added.
    func connectionParameters(parsed: [(String, String)]) -> [(String, String)] {
        var parameters = parsed.filter { overrides[$0.0] == nil }
        parameters += overrides.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        func value(_ key: String) -> String? { parameters.last { $0.0 == key }?.1 }
        if value("connect_timeout") == nil { parameters.append(("connect_timeout", String(connectTimeoutSeconds))) }
        if value("application_name") == nil { parameters.append(("application_name", applicationName)) }
        let userOptions = value("options") ?? ""
        parameters.removeAll { $0.0 == "client_encoding" || $0.0 == "options" }
        parameters.append(("client_encoding", "UTF8"))
        if poolMode == .transaction { return parameters }
        // The driver reads timestamps in ISO form and UTC; see PostgresTimestamp.
        var options = [userOptions, "-c TimeZone=UTC", "-c DateStyle=ISO,YMD", "-c bytea_output=hex"]
        if let statementTimeout {
            let milliseconds = statementTimeout.components.seconds * 1000
                + statementTimeout.components.attoseconds / 1_000_000_000_000_000
            options.append("-c statement_timeout=\(milliseconds)")
        }
        parameters.append(("options", options.filter { !$0.isEmpty }.joined(separator: " ")))
        return parameters
    }
}
