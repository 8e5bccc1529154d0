import Foundation
import Logging
import Postgres

/// Settings read from the environment; the README lists each variable and its default.
public struct AppConfiguration: Sendable {
    public enum Environment: String, Sendable {
        case development, production, test
    }

    public var environment: Environment = .development
    /// libpq conninfo string or `postgresql://` URI; empty uses libpq's `PG*` variables.
    public var databaseURL = ""
    public var host = "127.0.0.1"
    public var port = 8080
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
        if let text = value("ENVIRONMENT") {
            guard let environment = Environment(rawValue: text.lowercased()) else {
                throw ConfigurationError("ENVIRONMENT must be development, production or test, got \"\(text)\"")
            }
            self.environment = environment
        }
        databaseURL = value("DATABASE_URL") ?? ""
        host = value("HOST") ?? host
        port = try integer("PORT", in: 0...65535) ?? port
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
        if let milliseconds = try integer("DATABASE_ACQUIRE_TIMEOUT_MS", in: 1...600_000) {
            databaseAcquireTimeout = .milliseconds(milliseconds)
        }
        if let milliseconds = try integer("DATABASE_STATEMENT_TIMEOUT_MS", in: 1...86_400_000) {
            databaseStatementTimeout = .milliseconds(milliseconds)
        }
        if let seconds = try integer("DATABASE_STARTUP_TIMEOUT_SECONDS", in: 0...3600) {
            databaseStartupTimeout = .seconds(seconds)
        }
    }

    /// The driver's settings; `maxConnections` defaults to `databasePoolSize`.
    public func postgres(maxConnections: Int? = nil) -> PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: databaseURL)
        configuration.maxConnections = maxConnections ?? databasePoolSize
        configuration.acquireTimeout = databaseAcquireTimeout
        configuration.statementTimeout = databaseStatementTimeout
        return configuration
    }

    var migrationsDirectory: URL { resourceDirectory.appendingPathComponent("sql", isDirectory: true) }
    var openAPIFile: URL { resourceDirectory.appendingPathComponent("openapi.yaml") }
}

/// A setting that could not be used.
public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
