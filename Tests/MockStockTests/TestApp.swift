import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MockStock
import TestSupport

/// Builds the real application against a fresh database and runs `body` with a client.
enum TestApp {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The signing secret test apps use, so tests can forge tokens to prove they are refused.
    static let jwtSecret = "test-secret-long-enough-for-hs256-hs384-and-hs512-forgeries-0123456789"

    static let adminUsername = "test_admin"
    static let adminPassword = "test admin password"

    static func configuration(databaseURL: String) -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.environment = .test
        configuration.databaseURL = databaseURL
        configuration.databasePoolSize = 4
        configuration.resourceDirectory = repositoryRoot
        configuration.passwordHashing = .test
        configuration.jwtSecret = Array(jwtSecret.utf8)
        configuration.adminUsername = adminUsername
        configuration.adminPassword = adminPassword
        // Every test client has the same address; some tests register hundreds of players.
        configuration.throttles.registrationsPerAddress = 100_000
        // Tests set a price and trade at it at once.
        configuration.quoteCacheLifetime = .zero
        return configuration
    }

    /// `live` serves on a loopback port (for what needs a real connection: a peer
    /// address, a chunked body); `logger` receives what the server logs.
    static func run<T>(
        live: Bool = false,
        logger: Logger? = nil,
        configure: (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> T
    ) async throws -> T where T: Sendable {
        try await TemporaryDatabase.with { database in
            try await run(on: database, live: live, logger: logger, configure: configure, body)
        }
    }

    /// Runs the app on an existing database, e.g. to start it twice on the same data.
    static func run<T>(
        on database: TemporaryDatabase,
        live: Bool = false,
        logger: Logger? = nil,
        configure: (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> T
    ) async throws -> T where T: Sendable {
        var configuration = configuration(databaseURL: database.connectionString)
        if live { configuration.port = 0 }
        configure(&configuration)
        let logger = logger ?? {
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            return logger
        }()
        let app = try await buildApplication(configuration: configuration, logger: logger)
        return try await app.test(live ? .live : .router, body)
    }
}
