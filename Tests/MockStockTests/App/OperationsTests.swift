import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
@testable import MockStock
import Postgres
import Testing
import TestSupport

struct Problem: Decodable {
    let type: String
    let title: String
    let status: Int
    let detail: String
    let code: String
    let requestId: String
    /// Sent with `volume_cap`.
    var available: Int? = nil
}

func decodeProblem(_ response: TestResponse) throws -> Problem {
    #expect(response.headers[.contentType] == "application/problem+json")
    return try JSONDecoder().decode(Problem.self, from: Data(buffer: response.body))
}

@Suite("Operations routes and middleware")
struct OperationsTests {
    @Test("/healthz answers 200")
    func healthz() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("ok"))
            }
        }
    }

    @Test("/readyz is 200 while the database answers")
    func readyWithDatabase() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("/readyz is 503 problem+json while the database is unreachable, /healthz stays 200")
    func notReadyWithoutDatabase() async throws {
        var configuration = TestApp.configuration(databaseURL: "host=/nonexistent/mockstock port=1 dbname=none")
        configuration.migrateOnStart = false
        configuration.adminUsername = nil
        let app = try await buildApplication(configuration: configuration, logger: Logger(label: "test"))
        try await app.test(.router) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let problem = try decodeProblem(response)
                #expect(problem.code == "service_unavailable")
                #expect(!problem.detail.contains("nonexistent"))
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("a client's X-Request-ID is echoed; otherwise one is generated")
    func requestID() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: "trace-42"]) { response in
                #expect(response.headers[.requestID] == "trace-42")
            }
            try await client.execute(uri: "/healthz", method: .get) { response in
                let generated = try #require(response.headers[.requestID])
                #expect(generated.count == 32)
            }
            let tooLong = String(repeating: "x", count: 200)
            try await client.execute(uri: "/healthz", method: .get, headers: [.requestID: tooLong]) { response in
                #expect(response.headers[.requestID] != tooLong)
            }
        }
    }

    @Test("the web client is served at / with a content security policy; Chart.js from its directory; /api stays JSON")
    func webClient() async throws {
        let chartDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("chartjs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: chartDirectory, withIntermediateDirectories: true)
        try Data("/* chart */".utf8).write(to: chartDirectory.appendingPathComponent("chart.min.js"))
        defer { try? FileManager.default.removeItem(at: chartDirectory) }
        try await TestApp.run(configure: { $0.chartJSDirectory = chartDirectory }) { client in
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(String(buffer: page.body).contains("<script src=\"/app.js\" type=\"module\">"))
            #expect(page.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("default-src 'self'") == true)
            #expect(page.headers[.cacheControl] == "no-cache")
            let module = try await client.execute(uri: "/js/api.js", method: .get)
            #expect(module.status == .ok)
            #expect(module.headers[.contentType]?.contains("javascript") == true)
            let chart = try await client.execute(uri: "/vendor/chart.js/chart.min.js", method: .get)
            #expect(String(buffer: chart.body) == "/* chart */")
            #expect(try await client.execute(uri: "/../Package.swift", method: .get).status != .ok)
            #expect(try await client.execute(uri: "/missing.js", method: .get).status == .notFound)
            let api = try await client.execute(uri: "/api/nothing-here", method: .get)
            #expect(api.status == .unauthorized)
            #expect(api.headers[.contentType] == "application/problem+json")
        }
    }

    @Test("an unknown route is a problem+json 404 carrying the request id")
    func unknownRoute() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/nothing-here", method: .get, headers: [.requestID: "r-1"]) { response in
                #expect(response.status == .notFound)
                let problem = try decodeProblem(response)
                #expect(problem.code == "not_found")
                #expect(problem.status == 404)
                #expect(problem.requestId == "r-1")
            }
        }
    }

    @Test("a body over 1 MiB is refused with 413")
    func payloadTooLarge() async throws {
        try await TestApp.run { client in
            let body = ByteBuffer(repeating: UInt8(ascii: "a"), count: (1 << 20) + 1)
            try await client.execute(uri: "/healthz", method: .post, body: body) { response in
                #expect(response.status == .contentTooLarge)
                let problem = try decodeProblem(response)
                #expect(problem.code == "payload_too_large")
            }
        }
    }

    @Test("/metrics counts requests by route and status and reports the pool")
    func metrics() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/readyz", method: .get) { _ in }
            try await client.execute(uri: "/missing", method: .get) { _ in }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                #expect(text.contains(#"http_requests_total{route="/readyz",method="GET",status="200"} 1"#))
                #expect(text.contains(#"http_requests_total{route="unmatched",method="GET",status="404"} 1"#))
                #expect(text.contains("http_request_duration_seconds_bucket"))
                #expect(text.contains(#"db_pool_connections{state="idle"}"#))
                #expect(text.contains("\ndb_pool_waiting "))
                #expect(text.contains("# HELP http_requests_total HTTP requests by route, method and status"))
            }
        }
    }

    @Test("/openapi.yaml serves the API description")
    func openAPI() async throws {
        try await TestApp.run { client in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).hasPrefix("openapi: 3"))
            }
        }
    }

    @Test("start-up applies pending migrations from the resource directory")
    func migratesOnStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sql/migrations"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "CREATE TABLE started (id int);".write(
            to: directory.appendingPathComponent("sql/migrations/0001_started.sql"), atomically: true, encoding: .utf8
        )
        try await TemporaryDatabase.with { database in
            var configuration = TestApp.configuration(databaseURL: database.connectionString)
            configuration.resourceDirectory = directory
            configuration.adminUsername = nil
            let app = try await buildApplication(configuration: configuration, logger: Logger(label: "test"))
            try await app.test(.router) { client in
                try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let names = try await pool.query("SELECT name FROM schema_migrations").decodeColumn(String.self)
            await pool.close()
            #expect(names == ["0001_started"])
        }
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    @Test("defaults match docs/configuration.md")
    func defaults() throws {
        let configuration = try AppConfiguration(environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.logLevel == .info)
        #expect(configuration.environment == .development)
        #expect(configuration.standings.liveLimit == 250)
        #expect(configuration.standings.refreshInterval == .seconds(1))
        #expect(configuration.standings.unchangedInterval == .seconds(60))
        #expect(configuration.databasePoolMode == .session)
        #expect(configuration.replicaMaxLag == .seconds(1))
        #expect(configuration.postgresDirect() == nil)
        #expect(configuration.postgresReplica() == nil)
    }

    @Test("behind a transaction pooler the server keeps a direct session for LISTEN and migrations, and reads a replica")
    func cluster() throws {
        let configuration = try AppConfiguration(environment: [
            "DATABASE_URL": "host=127.0.0.1 port=6432", "DATABASE_POOL_MODE": "transaction",
            "DATABASE_DIRECT_URL": "host=a,b port=5432,5433 target_session_attrs=read-write",
            "DATABASE_REPLICA_URL": "host=127.0.0.1 port=5001", "REPLICA_MAX_LAG_MS": "250",
        ])
        #expect(configuration.postgres().poolMode == .transaction)
        let direct = try #require(configuration.postgresDirect())
        #expect(direct.poolMode == .session)
        #expect(direct.connectionString.contains("target_session_attrs=read-write"))
        let replica = try #require(configuration.postgresReplica())
        #expect(replica.poolMode == .session)
        #expect(replica.connectionString == "host=127.0.0.1 port=5001")
        #expect(configuration.replicaMaxLag == .milliseconds(250))
        // A transaction pooler cannot hold LISTEN or the migrations' lock: the direct URL is required.
        let error = try #require(throws: ConfigurationError.self) {
            try AppConfiguration(environment: ["DATABASE_URL": "port=6432", "DATABASE_POOL_MODE": "transaction"])
        }
        #expect(error.description.contains("DATABASE_DIRECT_URL"))
    }

    @Test("settings are read from the environment")
    func reads() throws {
        let configuration = try AppConfiguration(environment: [
            "HOST": "0.0.0.0", "PORT": "9000", "LOG_LEVEL": "DEBUG", "DATABASE_URL": "dbname=x",
            "ENVIRONMENT": "production", "DATABASE_POOL_SIZE": "32",
            "LEADERBOARD_LIVE_LIMIT": "250", "LEADERBOARD_REFRESH_SECONDS": "2",
            "LEADERBOARD_UNCHANGED_SECONDS": "600",
            "HTTP_HEADER_TIMEOUT_SECONDS": "7", "HTTP_IDLE_TIMEOUT_SECONDS": "30",
        ])
        #expect(configuration.requestHeadTimeout == .seconds(7))
        #expect(configuration.idleTimeout == .seconds(30))
        #expect(configuration.standings.liveLimit == 250)
        #expect(configuration.standings.refreshInterval == .seconds(2))
        #expect(configuration.standings.unchangedInterval == .seconds(600))
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.databaseURL == "dbname=x")
        #expect(configuration.environment == .production)
        #expect(configuration.databasePoolSize == 32)
    }

    @Test("values that do not parse are refused with the variable's name", arguments: [
        ["PORT": "eighty"], ["PORT": "70000"], ["LOG_LEVEL": "loud"], ["ENVIRONMENT": "staging"],
        ["DATABASE_POOL_SIZE": "0"], ["LEADERBOARD_REFRESH_SECONDS": "0"], ["LEADERBOARD_LIVE_LIMIT": "-1"],
        ["HTTP_HEADER_TIMEOUT_SECONDS": "0"], ["DATABASE_POOL_MODE": "statement"], ["REPLICA_MAX_LAG_MS": "-5"],
    ])
    func refuses(_ environment: [String: String]) throws {
        let error = try #require(throws: ConfigurationError.self) { try AppConfiguration(environment: environment) }
        #expect(error.description.contains(environment.keys.first!))
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-ID")!
}

@Suite("Reading one's own writes")
struct PlayerWritesTests {
    @Test("a player's last write is the floor for their replica reads until the replica can no longer be read")
    func floor() {
        let writes = PlayerWrites(horizon: .seconds(1))
        let start = ContinuousClock.now
        #expect(writes.lastWrite(userID: 7, at: start) == nil)
        writes.wrote(userID: 7, at: start)
        #expect(writes.lastWrite(userID: 7, at: start + .milliseconds(500)) == start)
        #expect(writes.lastWrite(userID: 8, at: start + .milliseconds(500)) == nil, "another player's write is not theirs")
        // Past the horizon no replica read could miss it: replicas further behind are not read.
        #expect(writes.lastWrite(userID: 7, at: start + .milliseconds(1_001)) == nil)
    }
}

@Suite("Token versions read on a replica")
struct ReplicaTokenVersionTests {
    @Test("a token newer than the replica knows, or a user it does not have yet, is checked on the primary")
    func newerThanReplica() async throws {
        try await TemporaryDatabase.with { primaryDatabase in
            try await TemporaryDatabase.with { replicaDatabase in
                try await primaryDatabase.withPool { primary throws in
                    try await replicaDatabase.withPool { replica throws in
                        // The "replica" is another database a step behind: user 1 logged in
                        // again (version 2) and user 2 registered since.
                        try await primary.query("CREATE TABLE users (id int PRIMARY KEY, token_version int, role text)")
                        try await primary.query("INSERT INTO users VALUES (1, 2, 'player'), (2, 0, 'player')")
                        try await replica.query("CREATE TABLE users (id int PRIMARY KEY, token_version int, role text)")
                        try await replica.query("INSERT INTO users VALUES (1, 1, 'player')")
                        let router = PostgresReplicaRouter(primary: primary, replica: replica, logger: Logger(label: "test"))
                        await router.probe(replica)
                        let cache = TokenVersionCache(
                            store: UserStore(pool: primary, reads: StaleReads(pool: primary, router: router)), lifetime: .seconds(2)
                        )
                        #expect(try await cache.state(of: 1, presented: 1)?.version == 1, "an old token: the replica's answer stands")
                        #expect(router.statistics.replicaReads == 1)
                        let fresh = TokenVersionCache(
                            store: UserStore(pool: primary, reads: StaleReads(pool: primary, router: router)), lifetime: .seconds(2)
                        )
                        #expect(try await fresh.state(of: 1, presented: 2)?.version == 2, "the new token is accepted")
                        #expect(try await fresh.state(of: 2, presented: 0)?.version == 0, "the new user is found")
                        #expect(try await fresh.state(of: 3, presented: 0) == nil)
                    }
                }
            }
        }
    }
}
