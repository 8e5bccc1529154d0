import Foundation
import Logging
import Postgres

/// Settings read from the environment; docs/configuration.md lists each variable and its default.
public struct AppConfiguration: Sendable {
    public enum Environment: String, Sendable {
        case development, production, test
    }

    public var environment: Environment = .development
    /// libpq conninfo string or `postgresql://` URI; empty uses libpq's `PG*` variables.
    public var databaseURL = ""
    /// What `databaseURL` reaches (`DATABASE_POOL_MODE`): PostgreSQL or a session pooler
    /// (`session`), or a transaction pooler such as pgbouncer (`transaction`).
    public var databasePoolMode: PostgresConfiguration.PoolMode = .session
    /// A direct connection to the primary for what needs a session of its own — `LISTEN`,
    /// migrations (`DATABASE_DIRECT_URL`); `databaseURL` when empty.
    public var databaseDirectURL = ""
    /// A streaming replica for reads that may be a little stale (`DATABASE_REPLICA_URL`).
    public var databaseReplicaURL = ""
    /// How far behind the primary the replica may be and still be read (`REPLICA_MAX_LAG_MS`).
    public var replicaMaxLag: Duration = .seconds(1)
    public var host = "127.0.0.1"
    public var port = 8080
    /// The address players' devices reach the server at (`PUBLIC_URL`, like
    /// `https://game.school.example`), for the join links a host hands out; without one,
    /// the links use this machine's network addresses when `host` listens beyond loopback.
    public var publicURL: String?
    public var logLevel: Logger.Level = .info
    /// Folder holding `sql/`, `openapi.yaml` and `Public/`; the working directory by default.
    public var resourceDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    public var databasePoolSize = 16
    public var databaseAcquireTimeout: Duration = .seconds(5)
    public var databaseStatementTimeout: Duration = .seconds(30)
    /// How long start-up waits for the database to accept connections.
    public var databaseStartupTimeout: Duration = .seconds(30)
    /// Whether `serve` applies pending migrations before it accepts requests.
    public var migrateOnStart = true
    /// HS256 signing secret, at least 32 bytes; required in production.
    public var jwtSecret: [UInt8]?
    public var jwtLifetime: Duration = .seconds(3600)
    /// How long a user's token version is cached: the longest a revoked token survives
    /// on a server process other than the one that revoked it.
    public var tokenCacheLifetime: Duration = .seconds(2)
    /// Requests a minute per API key on `/v2` (`BOT_RATE_LIMIT_PER_MINUTE`), shared by every process.
    public var botRequestsPerMinute = 200
    public var passwordHashing: PasswordHasher.Parameters = .owasp
    public var adminUsername: String?
    public var adminPassword: String?
    /// Limits on failed password checks and registrations (`LOGIN_FAILURES_*`, `REGISTRATIONS_PER_ADDRESS`).
    public var throttles = AccountThrottles.Settings()
    /// Proxies whose `X-Forwarded-For` is believed (`TRUSTED_PROXIES`); none by default.
    public var trustedProxies = TrustedProxies()
    /// Largest price upload an admin may send, in bytes (`ADMIN_UPLOAD_MAX_MB`, 1024 MiB).
    public var adminUploadLimit = 1 << 30
    /// Cash in every new personal portfolio.
    public var startingCash = Decimal(string: "10000.00")!

    public enum QuoteSource: String, Sendable, CaseIterable {
        case database, simulated, replay, http
    }

    /// How long a connection may take to send a request's head, from its start or from the
    /// previous response (`HTTP_HEADER_TIMEOUT_SECONDS`): slowloris clients are cut off.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a connection may stay silent before it is closed (`HTTP_IDLE_TIMEOUT_SECONDS`).
    public var idleTimeout: Duration = .seconds(60)
    /// Flat fee charged on every trade (`TRADE_FEE`).
    public var tradeFee = Decimal(0)
    /// How long each process reuses a stored quote (`QUOTE_CACHE_MS`); zero reads every time.
    public var quoteCacheLifetime: Duration = .milliseconds(500)
    /// When the market trades (`MARKET_HOURS`): `always` or `nyse`.
    public var marketHours: MarketHours.Schedule = .always
    /// How often open orders are matched and day orders expired even when no price is
    /// stored (`ORDER_SWEEP_SECONDS`): the market opening, and work a stopped process left.
    public var orderSweepInterval: Duration = .seconds(5)
    /// The time market hours and orders go by; tests move it.
    public var clock: @Sendable () -> Date = { Date() }
    /// Where prices come from (`QUOTE_PROVIDER`).
    public var quoteSource: QuoteSource = .database
    public var simulation = SimulatedMarket.Settings()
    public var replay = ReplayMarket.Settings()
    /// The live stream's pace and bounds (`STREAM_*`).
    public var stream = StreamFeed.Settings()
    /// How league standings are computed and kept (`LEADERBOARD_*`).
    public var standings = StandingsService.Settings()
    var http = HTTPQuoteProvider.Settings(urlTemplate: "")

    public init() {}

    /// Reads the configuration, refusing values that do not parse.
    public init(environment variables: [String: String]) throws {
        func value(_ name: String) -> String? {
            variables[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw ConfigurationError("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
            }
            return number
        }
        // Every time setting is a Duration; the variable's suffix says its unit.
        func seconds(_ name: String, in range: ClosedRange<Int>) throws -> Duration? {
            try integer(name, in: range).map { .seconds($0) }
        }
        func milliseconds(_ name: String, in range: ClosedRange<Int>) throws -> Duration? {
            try integer(name, in: range).map { .milliseconds($0) }
        }
        // Every amount of money is an exact decimal such as 10000.00.
        func money(_ name: String, in range: ClosedRange<Decimal>) throws -> Decimal? {
            guard let text = value(name) else { return nil }
            guard let amount = Decimal(exactly: text), range.contains(amount) else {
                throw ConfigurationError("\(name) must be a decimal such as 10000.00 in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
            }
            return amount
        }
        if let text = value("ENVIRONMENT") {
            guard let environment = Environment(rawValue: text.lowercased()) else {
                throw ConfigurationError("ENVIRONMENT must be development, production or test, got \"\(text)\"")
            }
            self.environment = environment
        }
        databaseURL = value("DATABASE_URL") ?? ""
        databaseDirectURL = value("DATABASE_DIRECT_URL") ?? ""
        databaseReplicaURL = value("DATABASE_REPLICA_URL") ?? ""
        if let text = value("DATABASE_POOL_MODE") {
            guard let mode = PostgresConfiguration.PoolMode(rawValue: text.lowercased()) else {
                throw ConfigurationError("DATABASE_POOL_MODE must be session or transaction, got \"\(text)\"")
            }
            databasePoolMode = mode
        }
        if databasePoolMode == .transaction, databaseDirectURL.isEmpty {
            throw ConfigurationError("DATABASE_POOL_MODE=transaction needs DATABASE_DIRECT_URL, a direct connection to the primary for LISTEN and migrations")
        }
        replicaMaxLag = try milliseconds("REPLICA_MAX_LAG_MS", in: 0...3_600_000) ?? replicaMaxLag
        host = value("HOST") ?? host
        port = try integer("PORT", in: 0...65535) ?? port
        if let text = value("PUBLIC_URL") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError("PUBLIC_URL must be an http or https address, like https://game.school.example")
            }
            publicURL = text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        botRequestsPerMinute = try integer("BOT_RATE_LIMIT_PER_MINUTE", in: 1...1_000_000) ?? botRequestsPerMinute
        if let text = value("LOG_LEVEL") {
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ConfigurationError("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
            }
            logLevel = level
        }
        if let directory = value("RESOURCE_DIR") {
            resourceDirectory = URL(fileURLWithPath: directory, isDirectory: true)
        }
        databasePoolSize = try integer("DATABASE_POOL_SIZE", in: 1...1000) ?? databasePoolSize
        databaseAcquireTimeout = try milliseconds("DATABASE_ACQUIRE_TIMEOUT_MS", in: 1...600_000) ?? databaseAcquireTimeout
        databaseStatementTimeout = try milliseconds("DATABASE_STATEMENT_TIMEOUT_MS", in: 1...86_400_000) ?? databaseStatementTimeout
        databaseStartupTimeout = try seconds("DATABASE_STARTUP_TIMEOUT_SECONDS", in: 0...3600) ?? databaseStartupTimeout
        if let secret = value("JWT_SECRET") {
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError("JWT_SECRET must be at least 32 bytes (256 bits); generate one with `openssl rand -base64 48`")
            }
            jwtSecret = Array(secret.utf8)
        }
        jwtLifetime = try seconds("JWT_TTL_SECONDS", in: 60...2_592_000) ?? jwtLifetime
        if let profile = value("PASSWORD_HASH_PROFILE") {
            switch profile.lowercased() {
            case "default", "owasp": passwordHashing = .owasp
            case "test": passwordHashing = .test
            default: throw ConfigurationError("PASSWORD_HASH_PROFILE must be default or test, got \"\(profile)\"")
            }
        }
        adminUsername = value("ADMIN_USERNAME")
        adminPassword = value("ADMIN_PASSWORD")
        throttles.failuresPerUsername = try integer("LOGIN_FAILURES_PER_USERNAME", in: 1...1_000_000) ?? throttles.failuresPerUsername
        throttles.failuresPerAddress = try integer("LOGIN_FAILURES_PER_ADDRESS", in: 1...1_000_000) ?? throttles.failuresPerAddress
        throttles.failuresOverall = try integer("LOGIN_FAILURES_GLOBAL", in: 1...100_000_000) ?? throttles.failuresOverall
        throttles.registrationsPerAddress = try integer("REGISTRATIONS_PER_ADDRESS", in: 1...100_000_000) ?? throttles.registrationsPerAddress
        adminUploadLimit = (try integer("ADMIN_UPLOAD_MAX_MB", in: 1...65_536)).map { $0 << 20 } ?? adminUploadLimit
        if let proxies = value("TRUSTED_PROXIES") { trustedProxies = try TrustedProxies(parsing: proxies) }
        startingCash = try money("STARTING_CASH", in: Decimal(string: "0.01")!...1_000_000_000_000) ?? startingCash
        tradeFee = try money("TRADE_FEE", in: 0...1_000_000) ?? tradeFee
        try readMarket(value, { try integer($0, in: $1) }, seconds, milliseconds)
        quoteCacheLifetime = try milliseconds("QUOTE_CACHE_MS", in: 0...60_000) ?? quoteCacheLifetime
        if let members = try integer("LEADERBOARD_LIVE_LIMIT", in: 0...10_000_000) { standings.liveLimit = members }
        standings.refreshInterval = try seconds("LEADERBOARD_REFRESH_SECONDS", in: 1...3600) ?? standings.refreshInterval
        standings.unchangedInterval = try seconds("LEADERBOARD_UNCHANGED_SECONDS", in: 1...86_400) ?? standings.unchangedInterval
        stream.standingsInterval = try seconds("STREAM_STANDINGS_SECONDS", in: 1...3600) ?? stream.standingsInterval
        stream.queueLimit = try integer("STREAM_QUEUE_LIMIT", in: 16...100_000) ?? stream.queueLimit
        stream.stallLimit = try seconds("STREAM_STALL_SECONDS", in: 1...3600) ?? stream.stallLimit
        stream.announceInterval = try milliseconds("STREAM_ANNOUNCE_MS", in: 1...1000) ?? stream.announceInterval
        requestHeadTimeout = try seconds("HTTP_HEADER_TIMEOUT_SECONDS", in: 1...3600) ?? requestHeadTimeout
        idleTimeout = try seconds("HTTP_IDLE_TIMEOUT_SECONDS", in: 1...86_400) ?? idleTimeout
        if let directory = value("CHART_JS_DIR") { chartJSDirectory = URL(fileURLWithPath: directory, isDirectory: true) }
    }

    private mutating func readMarket(
        _ value: (String) -> String?,
        _ integer: (String, ClosedRange<Int>) throws -> Int?,
        _ seconds: (String, ClosedRange<Int>) throws -> Duration?,
        _ milliseconds: (String, ClosedRange<Int>) throws -> Duration?
    ) throws {
        if let text = value("QUOTE_PROVIDER") {
            guard let source = QuoteSource(rawValue: text.lowercased()) else {
                throw ConfigurationError("QUOTE_PROVIDER must be one of \(QuoteSource.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
            }
            quoteSource = source
        }
        if let text = value("MARKET_HOURS") {
            guard let schedule = MarketHours.Schedule(rawValue: text.lowercased()) else {
                throw ConfigurationError("MARKET_HOURS must be always or nyse, got \"\(text)\"")
            }
            marketHours = schedule
        }
        orderSweepInterval = try seconds("ORDER_SWEEP_SECONDS", 1...3600) ?? orderSweepInterval
        simulation.tickInterval = try seconds("SIMULATION_TICK_SECONDS", 1...3600) ?? simulation.tickInterval
        simulation.seed = UInt64(try integer("SIMULATION_SEED", 0...Int.max) ?? 0)
        simulation.minutesPerTick = Double(try integer("SIMULATION_MINUTES_PER_TICK", 1...390) ?? 1)
        if let day = value("REPLAY_START") {
            guard day.wholeMatch(of: /\d{4}-\d{2}-\d{2}/) != nil else {
                throw ConfigurationError("REPLAY_START must be a day written YYYY-MM-DD, got \"\(day)\"")
            }
            replay.startDay = day
        }
        if let speed = try integer("REPLAY_DAYS_PER_MINUTE", 1...1440) {
            replay.tradingDaysPerMinute = Double(speed)
        }
        http.urlTemplate = value("HTTP_QUOTES_URL") ?? ""
        if quoteSource == .http {
            guard http.urlTemplate.hasPrefix("http://") || http.urlTemplate.hasPrefix("https://"),
                http.urlTemplate.contains("{symbol}") || http.urlTemplate.contains("{symbols}")
            else {
                throw ConfigurationError("QUOTE_PROVIDER=http needs HTTP_QUOTES_URL, an http(s) URL holding {symbol} or {symbols}")
            }
        }
        http.timeout = try milliseconds("HTTP_QUOTES_TIMEOUT_MS", 1...60_000) ?? http.timeout
        http.ttl = try seconds("HTTP_QUOTES_TTL_SECONDS", 0...86_400) ?? http.ttl
        http.rateLimit = try integer("HTTP_QUOTES_RATE_LIMIT", 1...1_000_000) ?? http.rateLimit
        http.rateInterval = try seconds("HTTP_QUOTES_RATE_INTERVAL_SECONDS", 1...86_400) ?? http.rateInterval
        http.maxStaleness = try seconds("HTTP_QUOTES_MAX_STALENESS_SECONDS", 0...604_800) ?? http.maxStaleness
        http.batchSize = try integer("HTTP_QUOTES_BATCH_SIZE", 1...500) ?? http.batchSize
    }

    /// Refuses settings that are unsafe in production.
    public func validateForEnvironment() throws {
        guard environment == .production else { return }
        guard jwtSecret != nil else {
            throw ConfigurationError("JWT_SECRET must be set in production (at least 32 bytes)")
        }
        guard passwordHashing != .test else {
            throw ConfigurationError("PASSWORD_HASH_PROFILE=test is unsafe and refused in production")
        }
    }

    /// The driver's settings; `maxConnections` defaults to `databasePoolSize`.
    public func postgres(maxConnections: Int? = nil) -> PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: databaseURL)
        configuration.maxConnections = maxConnections ?? databasePoolSize
        configuration.acquireTimeout = databaseAcquireTimeout
        configuration.statementTimeout = databaseStatementTimeout
        configuration.poolMode = databasePoolMode
        return configuration
    }

    /// The direct connection's settings (`LISTEN`, migrations), or nil when `databaseURL`
    /// serves for them too: a session-mode URL with no `DATABASE_DIRECT_URL`.
    public func postgresDirect() -> PostgresConfiguration? {
        guard !databaseDirectURL.isEmpty else { return nil }
        var configuration = postgres(maxConnections: 2)
        configuration.connectionString = databaseDirectURL
        configuration.poolMode = .session
        return configuration
    }

    /// The replica's settings, or nil without `DATABASE_REPLICA_URL`.
    public func postgresReplica() -> PostgresConfiguration? {
        guard !databaseReplicaURL.isEmpty else { return nil }
        var configuration = postgres()
        configuration.connectionString = databaseReplicaURL
        configuration.poolMode = .session
        // A replica that does not answer at once is not waited for: its reads go to the primary.
        configuration.acquireTimeout = min(databaseAcquireTimeout, .seconds(1))
        configuration.connectTimeoutSeconds = 1
        return configuration
    }

    var sqlDirectory: URL { resourceDirectory.appendingPathComponent("sql", isDirectory: true) }
    var openAPIFile: URL { resourceDirectory.appendingPathComponent("openapi.yaml") }
    var publicDirectory: URL { resourceDirectory.appendingPathComponent("Public", isDirectory: true) }
    /// Where Chart.js is installed (`CHART_JS_DIR`; Debian's libjs-chart.js by default).
    public var chartJSDirectory = URL(fileURLWithPath: "/usr/share/javascript/chart.js", isDirectory: true)
}

/// A setting that could not be used.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
