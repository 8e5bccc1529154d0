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
        // Tests set a price and trade at it at once.
        configuration.quoteCacheLifetime = .zero
        return configuration
    }

    static func run<T>(
        configure: (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> T
    ) async throws -> T where T: Sendable {
        try await TemporaryDatabase.with { database in
            try await run(on: database, configure: configure, body)
        }
    }

    /// Runs the app on an existing database, e.g. to start it twice on the same data.
    static func run<T>(
        on database: TemporaryDatabase,
        configure: (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> T
    ) async throws -> T where T: Sendable {
        var configuration = configuration(databaseURL: database.connectionString)
        configure(&configuration)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let app = try await buildApplication(configuration: configuration, logger: logger)
        return try await app.test(.router, body)
    }
}
