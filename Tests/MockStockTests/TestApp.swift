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

    static func configuration(databaseURL: String) -> AppConfiguration {
        var configuration = AppConfiguration()
        configuration.environment = .test
        configuration.databaseURL = databaseURL
        configuration.databasePoolSize = 4
        configuration.resourceDirectory = repositoryRoot
        return configuration
    }

    static func run<T>(
        configure: (inout AppConfiguration) -> Void = { _ in },
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> T
    ) async throws -> T where T: Sendable {
        try await TemporaryDatabase.with { database in
            var configuration = configuration(databaseURL: database.connectionString)
            configure(&configuration)
            let app = try await buildApplication(configuration: configuration, logger: Logger(label: "test"))
            return try await app.test(.router, body)
        }
    }
}
