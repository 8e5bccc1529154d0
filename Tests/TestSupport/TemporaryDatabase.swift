import Foundation
import Logging
import Postgres

/// At most this many test databases exist at once, so that tests running in parallel
/// stay within the cluster's connection limit.
private let permits = AsyncSemaphore(permits: 12)

/// A counting semaphore for tasks.
actor AsyncSemaphore {
    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(permits: Int) { available = permits }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// A database created for one test and dropped after it, on the cluster named by
/// `TEST_DATABASE_URL` (`make test` starts one and sets it).
public struct TemporaryDatabase: Sendable {
    public let name: String
    public let configuration: PostgresConfiguration

    /// A libpq connection string for this database (the cluster's string must be in
    /// `key=value` form, as `make test` sets it; a later keyword wins over an earlier one).
    public var connectionString: String { Self.clusterConnectionString + " dbname=\(name)" }

    /// The cluster's connection string; tests fail with a clear message without it.
    public static var clusterConnectionString: String {
        guard let url = ProcessInfo.processInfo.environment["TEST_DATABASE_URL"], !url.isEmpty else {
            fatalError("TEST_DATABASE_URL is not set: run the tests with `make test`, which starts a database")
        }
        return url
    }

    /// Creates a database, runs `body` with its configuration, and drops it afterwards.
    public static func with<T>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (TemporaryDatabase) async throws -> T
    ) async throws -> T {
        await permits.acquire()
        defer { Task { await permits.release() } }
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = adminPool()
        var configuration = PostgresConfiguration(connectionString: clusterConnectionString)
        configuration.overrides["dbname"] = name
        do {
            try await admin.query("CREATE DATABASE \(unescaped: name)")
            let value = try await body(TemporaryDatabase(name: name, configuration: configuration))
            try await admin.query("DROP DATABASE \(unescaped: name) WITH (FORCE)")
            await admin.close()
            return value
        } catch {
            _ = try? await admin.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)")
            await admin.close()
            throw error
        }
    }

    /// Runs `body` with a pool on a fresh database; the pool is closed afterwards.
    public static func withPool<T>(
        isolation: isolated (any Actor)? = #isolation,
        configure: (inout PostgresConfiguration) -> Void = { _ in },
        _ body: (PostgresConnectionPool) async throws -> T
    ) async throws -> T {
        try await with { database in try await database.withPool(configure: configure, body) }
    }

    /// Runs `body` with a pool on this database; the pool is closed afterwards, also when
    /// `body` throws.
    public func withPool<T>(
        isolation: isolated (any Actor)? = #isolation,
        configure: (inout PostgresConfiguration) -> Void = { _ in },
        _ body: (PostgresConnectionPool) async throws -> T
    ) async throws -> T {
        var configuration = configuration
        configure(&configuration)
        let pool = PostgresConnectionPool(configuration: configuration)
        do {
            let value = try await body(pool)
            await pool.close()
            return value
        } catch {
            await pool.close()
            throw error
        }
    }

    /// A pool on the cluster's maintenance database, for creating and dropping databases.
    public static func adminPool() -> PostgresConnectionPool {
        var configuration = PostgresConfiguration(connectionString: clusterConnectionString)
        configuration.overrides["dbname"] = "postgres"
        configuration.maxConnections = 1
        return PostgresConnectionPool(configuration: configuration)
    }

    /// Terminates this database's listening connections (whose last statement was
    /// `LISTEN`), as a database restart would; returns how many there were.
    public func terminateListeners() async throws -> Int {
        let admin = Self.adminPool()
        do {
            let terminated = try await admin.query(
                """
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                WHERE datname = \(name) AND query LIKE 'LISTEN%'
                """
            ).decodeColumn(Int.self)[0]
            await admin.close()
            return terminated
        } catch {
            await admin.close()
            throw error
        }
    }
}
