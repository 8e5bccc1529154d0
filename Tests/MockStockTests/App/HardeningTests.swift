import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import MockStock
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Defects found by the security review, each proved fixed by a test.
@Suite("Hardening")
struct HardeningTests {
    /// A plain TCP connection to the server, for requests written a few bytes at a time.
    struct RawConnection {
        let channel: any Channel

        static func open(port: Int) async throws -> RawConnection {
            RawConnection(channel: try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get())
        }

        /// Writes `text` a line every `pause`; true when the server closed the connection first.
        func trickle(_ lines: [String], pause: Duration) async throws -> Bool {
            for line in lines {
                guard channel.isActive else { return true }
                try? await channel.writeAndFlush(ByteBuffer(string: line)).get()
                try await Task.sleep(for: pause)
            }
            return !channel.isActive
        }
    }

    @Test("a request head trickled in slower than the head timeout is cut, on a new connection and on a kept-alive one")
    func slowRequestHeadsAreCut() async throws {
        try await TestApp.run(live: true, configure: { $0.requestHeadTimeout = .seconds(1) }) { client in
            let port = try #require(client.port)
            let trickle = ["GET /api/me HTTP/1.1\r\n", "Host: x\r\n"] + (0..<12).map { "X-Slow-\($0): y\r\n" }
            // A first head: the WebSocket upgrade handler reads it before any HTTP handler is in place.
            let fresh = try await RawConnection.open(port: port)
            let started = ContinuousClock.now
            #expect(try await fresh.trickle(trickle, pause: .milliseconds(250)))
            #expect(ContinuousClock.now - started < .seconds(2))
            // A second head on a kept-alive connection, after a whole request was answered.
            let kept = try await RawConnection.open(port: port)
            #expect(try await kept.trickle(["GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"], pause: .milliseconds(300)) == false)
            #expect(try await kept.trickle(trickle, pause: .milliseconds(250)))
            // A head sent at once is served, after the deadline it would have missed.
            let prompt = try await RawConnection.open(port: port)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await prompt.trickle(["GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"], pause: .milliseconds(900)) == false)
            for connection in [fresh, kept, prompt] { try? await connection.channel.close() }
        }
    }

    @Test("every /api response, errors included, is not stored by caches and not sniffed")
    func apiResponsesAreNotCached() async throws {
        try await TestApp.run { client in
            let token = try await client.register("hannah").token
            for response in [
                try await client.get("/api/me", token: token),
                try await client.get("/api/me", token: nil),
                try await client.get("/api/no-such-route", token: token),
                try await client.post("/api/auth/login", json: #"{"username":"hannah","password":"wrong password"}"#),
            ] {
                #expect(response.headers[.cacheControl] == "no-store", "\(response.status)")
                #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(response.status)")
            }
        }
    }

    @Test("a symbol starting with '-' or '.' is refused as the database would, never a 500", arguments: ["-AB", ".AB"])
    func symbolPatternMatchesTheDatabase(_ symbol: String) async throws {
        try await TestApp.run { client in
            let admin = try await client.adminToken()
            let instrument = #"[{"symbol":"\#(symbol)","name":"Dash Corp"}]"#
            let refused = try await client.send(.put, "/api/admin/instruments", body: instrument, token: admin)
            #expect(refused.status == .unprocessableContent)
            #expect(try decodeProblem(refused).code == "validation_failed")
            let quote = #"[{"symbol":"\#(symbol)","price":"1.00"}]"#
            let unknown = try await client.send(.post, "/api/admin/quotes", body: quote, token: admin)
            #expect(unknown.status == .notFound)
            #expect(try decodeProblem(unknown).code == "unknown_symbol")
        }
    }
}

// MARK: Throttles

extension HardeningTests {
    static func statuses(_ count: Int, _ request: @Sendable @escaping () async throws -> TestResponse) async throws -> [HTTPResponse.Status] {
        try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for _ in 0..<count { group.addTask { try await request().status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("40 concurrent wrong passwords for one username get exactly 10 password checks; the rest wait")
    func loginBurstIsCountedBeforeTheCheck() async throws {
        try await TestApp.run { client in
            _ = try await client.register("olga")
            let statuses = try await Self.statuses(40) { try await client.login("olga", password: "wrong guess") }
            #expect(statuses.filter { $0 == .unauthorized }.count == 10)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 30)
            let refused = try await client.login("olga")
            #expect(refused.status == .tooManyRequests)
            #expect((1...60).contains(try #require(refused.headers[.retryAfter].flatMap(Int.init))))
        }
    }

    @Test("failed logins over many usernames from one address are limited (password spraying)")
    func passwordSprayingIsLimitedPerAddress() async throws {
        try await TestApp.run { client in
            _ = try await client.register("sprayed")
            for index in 0..<50 {
                #expect(try await client.login("victim\(index)", password: "Summer2026!").status == .unauthorized)
            }
            let refused = try await client.login("victim50", password: "Summer2026!")
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
            // The address's budget is spent for everyone behind it, for the rest of the minute.
            #expect(try await client.login("sprayed").status == .tooManyRequests)
        }
    }

    @Test("successful logins give their attempt back: they never use up an address's budget")
    func successfulLoginsAreNotFailures() async throws {
        try await TestApp.run(configure: { $0.throttles.failuresPerAddress = 3 }) { client in
            _ = try await client.register("rosa")
            for _ in 0..<10 { #expect(try await client.login("rosa").status == .ok) }
            for _ in 0..<3 { #expect(try await client.login("rosa", password: "wrong guess").status == .unauthorized) }
            #expect(try await client.login("rosa").status == .tooManyRequests)
        }
    }

    @Test("the whole server's failed logins have a budget too")
    func failedLoginsHaveAGlobalBudget() async throws {
        try await TestApp.run(configure: { $0.throttles.failuresOverall = 5 }) { client throws in
            for index in 0..<5 { #expect(try await client.login("nobody\(index)", password: "wrong guess").status == .unauthorized) }
            #expect(try await client.login("nobody5", password: "wrong guess").status == .tooManyRequests)
        }
    }

    @Test("registrations from one address are limited per hour")
    func registrationsAreLimitedPerAddress() async throws {
        try await TestApp.run(configure: { $0.throttles.registrationsPerAddress = 3 }) { client in
            for index in 0..<3 { _ = try await client.register("newcomer\(index)") }
            let refused = try await client.post("/api/auth/register", json: #"{"username":"newcomer3","password":"correct horse"}"#)
            #expect(refused.status == .tooManyRequests)
            #expect(try decodeProblem(refused).code == "rate_limited")
            #expect((61...3600).contains(try #require(refused.headers[.retryAfter].flatMap(Int.init))))
            #expect(try await client.login("newcomer3").status == .unauthorized)
        }
    }

    @Test("wrong current passwords count like failed logins of that username")
    func passwordChangeGuessesAreThrottled() async throws {
        try await TestApp.run { client in
            let token = try await client.register("pavel").token
            let guess = #"{"currentPassword":"guess guess","newPassword":"new password 1"}"#
            for _ in 0..<10 {
                #expect(try await client.post("/api/auth/password", json: guess, token: token).status == .forbidden)
            }
            let right = #"{"currentPassword":"correct horse","newPassword":"new password 1"}"#
            let refused = try await client.post("/api/auth/password", json: right, token: token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] != nil)
            #expect(try await client.login("pavel").status == .tooManyRequests)
        }
    }

    @Test("a 4 KB username at login is a wrong login, not a 500, and stores nothing of its size")
    func hugeUsernameAtLogin() async throws {
        try await TestApp.run { client in
            let name = String(repeating: "x", count: 4096)
            #expect(try await client.login(name, password: "guess guess").status == .unauthorized)
            #expect(try await client.login(name.uppercased(), password: "guess guess").status == .unauthorized)
            let register = try await client.post("/api/auth/register", json: #"{"username":"\#(name)","password":"correct horse"}"#)
            #expect(register.status == .unprocessableContent)
        }
    }

    @Test("X-Forwarded-For names the client only when a trusted proxy sent it", arguments: [true, false])
    func forwardedForOnlyFromTrustedProxies(_ trusted: Bool) async throws {
        try await TestApp.run(live: true, configure: {
            $0.throttles.failuresPerAddress = 3
            if trusted { $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1, ::1") }
        }) { client throws in
            func login(from address: String) async throws -> HTTPResponse.Status {
                let headers: HTTPFields = [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: address]
                let body = ByteBuffer(string: #"{"username":"nobody","password":"wrong guess"}"#)
                return try await client.execute(uri: "/api/auth/login", method: .post, headers: headers, body: body).status
            }
            // Each guess names a different username budget's worth of client, but only a
            // trusted proxy is believed: otherwise all come from the peer, 127.0.0.1.
            for index in 0..<3 { #expect(try await login(from: "203.0.113.\(index + 1)") == .unauthorized) }
            #expect(try await login(from: "203.0.113.9") == (trusted ? .unauthorized : .tooManyRequests))
        }
    }

    @Test("client addresses: the peer, unless a trusted proxy forwarded the request")
    func clientAddressResolution() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.7, 2001:db8::/32")
        #expect(proxies.clientAddress(peer: "198.51.100.4", forwardedFor: ["1.2.3.4"]) == "198.51.100.4")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["1.2.3.4"]) == "1.2.3.4")
        // A client's own header entries to the left of what proxies appended are not believed.
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["6.6.6.6, 1.2.3.4, 192.168.1.7"]) == "1.2.3.4")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["6.6.6.6", "1.2.3.4"]) == "1.2.3.4")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["not an address"]) == "10.1.2.3")
        #expect(proxies.clientAddress(peer: "2001:db8::1", forwardedFor: ["::ffff:1.2.3.4"]) == "1.2.3.4")
        #expect(proxies.clientAddress(peer: "2001:db9::1", forwardedFor: ["1.2.3.4"]) == "2001:db9::1")
        #expect(proxies.clientAddress(peer: nil, forwardedFor: ["1.2.3.4"]) == "unknown")
        #expect(TrustedProxies().clientAddress(peer: "10.1.2.3", forwardedFor: ["1.2.3.4"]) == "10.1.2.3")
        #expect(throws: ConfigurationError.self) { try TrustedProxies(parsing: "10.0.0.0/33") }
        #expect(throws: ConfigurationError.self) { try TrustedProxies(parsing: "proxy.example.org") }
    }
}

// MARK: One input rule

extension HardeningTests {
    static let combining = "a" + String(repeating: "\u{0301}", count: 100)

    /// `text` as a JSON string literal, escapes and all.
    static func jsonString(_ text: String) throws -> String {
        String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
    }

    @Test("text is counted as the database counts it: a letter with 100 combining marks is too long, never a 500")
    func lengthsAreCountedInScalars() async throws {
        try await TestApp.run { client in
            let token = try await client.register("umberto").token
            let admin = try await client.adminToken()
            let longName = String(repeating: Self.combining, count: 1)  // 1 grapheme, 101 scalars
            let league = try await client.post("/api/leagues/create", json: #"{"name":"\#(longName)"}"#, token: token)
            #expect(league.status == .unprocessableContent)
            #expect(try decodeProblem(league).detail.contains("name"))
            let email = String(repeating: Self.combining, count: 3) + "@example.org"
            let register = try await client.post("/api/auth/register", json: #"{"username":"ursula","password":"correct horse","email":"\#(email)"}"#)
            #expect(register.status == .unprocessableContent)
            #expect(try decodeProblem(register).detail.contains("email"))
            var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(token)"]
            headers[HTTPField.Name("Idempotency-Key")!] = String(repeating: Self.combining, count: 3)
            let trade = try await client.execute(uri: "/api/stock/buy", method: .post, headers: headers,
                                                 body: ByteBuffer(string: #"{"symbol":"AAPL","amount":1}"#))
            #expect(trade.status == .unprocessableContent)
            let title = String(repeating: Self.combining, count: 2)
            let broadcast = try await client.post("/api/admin/notifications", json: #"{"title":"\#(title)","body":""}"#, token: admin)
            #expect(broadcast.status == .unprocessableContent)
            let instrument = try await client.send(.put, "/api/admin/instruments",
                                                   body: #"[{"symbol":"LONG","name":"\#(title)"}]"#, token: admin)
            #expect(instrument.status == .unprocessableContent)
            #expect(try decodeProblem(instrument).detail.contains("[0].name"))
        }
    }

    @Test("text shown to others refuses control and bidirectional-override characters", arguments: [
        "evil\u{202E}gnp.exe", "isolate\u{2066}d", "bell\u{07}", "new\nline", "mark\u{200F}",
    ])
    func shownTextRefusesControls(_ text: String) async throws {
        try await TestApp.run { client in
            let token = try await client.register("valeria").token
            let admin = try await client.adminToken()
            let encoded = try Self.jsonString(text)
            let league = try await client.post("/api/leagues/create", json: #"{"name":\#(encoded)}"#, token: token)
            #expect(league.status == .unprocessableContent)
            #expect(try decodeProblem(league).code == "validation_failed")
            let broadcast = try await client.post("/api/admin/notifications", json: #"{"title":\#(encoded),"body":""}"#, token: admin)
            #expect(broadcast.status == .unprocessableContent)
            let instrument = try await client.send(.put, "/api/admin/instruments",
                                                   body: #"[{"symbol":"CTRL","name":\#(encoded)}]"#, token: admin)
            #expect(instrument.status == .unprocessableContent)
        }
    }

    @Test("names in any script, with accents and emoji, are welcome")
    func unicodeNamesAreAccepted() async throws {
        try await TestApp.run { client in
            let token = try await client.register("wanda").token
            for name in ["Ünïcode Léague 🏆", "ליגת המסחר", "株式リーグ", "👩‍👩‍👧 family"] {
                let encoded = try Self.jsonString(name)
                let league = try await client.post("/api/leagues/create", json: #"{"name":\#(encoded)}"#, token: token)
                #expect(league.status == .created, "\(name)")
            }
            let admin = try await client.adminToken()
            let body = #"{"title":"Market closes early","body":"Line one\nLine two\twith a tab"}"#
            #expect(try await client.post("/api/admin/notifications", json: body, token: admin).status == .created)
        }
    }
}

// MARK: Logs, bodies, fees

/// Collects every line the server logs, at every level.
final class LogCapture: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }

    var logger: Logger {
        Logger(label: "capture") { label in Handler(capture: self) }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let error = event.error.map { " \(String(reflecting: $0))" } ?? ""
            capture.storage.withLock { $0.append("\(event.level) \(event.message) \(all)\(error)") }
        }
    }
}

extension HardeningTests {
    @Test("no log line, at any level, holds a password, hash, token or secret, whatever errors requests cause")
    func nothingSecretInLogs() async throws {
        let capture = LogCapture()
        let password = "my secret passphrase"
        let token = try await TestApp.run(logger: capture.logger) { client in
            let token = try await client.register("xena", password: password).token
            _ = try await client.login("xena", password: password + " wrong")
            _ = try await client.login("xena", password: password)
            _ = try await client.post("/api/auth/password", json: #"{"currentPassword":"\#(password) no","newPassword":"\#(password) 2"}"#, token: token)
            _ = try await client.post("/api/auth/register", json: #"{"username":"xena","password":"\#(password)"}"#)
            let email = String(repeating: Self.combining, count: 3) + "@example.org"
            _ = try await client.post("/api/auth/register", json: #"{"username":"yuri","password":"\#(password)","email":"\#(email)"}"#)
            _ = try await client.login(String(repeating: "y", count: 4096), password: password)
            _ = try await client.post("/api/leagues/create", json: #"{"name":"\#(Self.combining)"}"#, token: token)
            _ = try await client.get("/api/me", token: token + "x")
            _ = try await client.post("/api/stock/buy", json: #"{"symbol":"NOPE","amount":1}"#, token: token)
            _ = try await client.post("/api/stock/buy", json: #"{"symbol":"AAPL","amount":99999999999999999999}"#, token: token)
            _ = try await client.post("/api/auth/logout", json: "", token: token)
            _ = try await client.get("/api/me", token: token)
            return token
        }
        let log = capture.lines.joined(separator: "\n")
        #expect(!log.isEmpty)
        for secret in [password, "$scrypt$", token, TestApp.jwtSecret, TestApp.adminPassword, "Failing row"] {
            #expect(!log.contains(secret), "the log holds \(secret.prefix(12))…")
        }
    }

    @Test("a chunked body over the limit is 413, never a 500, on every route group", arguments: ["/api/auth/login", "/api/leagues/create"])
    func chunkedBodiesAreCounted(_ path: String) async throws {
        try await TestApp.run(live: true) { client in
            let token = try await client.register("zora").token
            let response = try await Self.sendChunked(port: try #require(client.port), path: path, token: token,
                                                      chunk: String(repeating: " ", count: 64 * 1024), count: 24)
            #expect(response.status == 413)
            #expect(response.body.contains("payload_too_large"))
        }
    }

    @Test("a chunked price upload over ADMIN_UPLOAD_MAX_MB is 413 and stores nothing")
    func chunkedAdminUploadsHaveACap() async throws {
        try await TestApp.run(live: true, configure: { $0.adminUploadLimit = 1 << 20 }) { client in
            let admin = try await client.adminToken()
            #expect(try await client.send(.put, "/api/admin/instruments", body: #"[{"symbol":"BIG","name":"Big Corp"}]"#, token: admin).status == .ok)
            var rows = "symbol,date,open,high,low,close,volume\n"
            var day = Date().addingTimeInterval(-4.5 * 365 * 86_400)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withFullDate]
            while rows.utf8.count < 64 * 1024 {
                rows += "BIG,\(formatter.string(from: day)),1,1,1,1,100\n"
                day.addTimeInterval(86_400)
            }
            let header = "symbol,date,open,high,low,close,volume\n"
            let body = String(rows.dropFirst(header.count))
            let response = try await Self.sendChunked(port: try #require(client.port), path: "/api/admin/prices", token: admin,
                                                      first: header, chunk: body, count: 24, contentType: "text/csv")
            #expect(response.status == 413)
            let history = try await client.get("/api/stock/BIG/chart?range=5y", token: admin)
            #expect(!String(buffer: history.body).contains("\"close\""))
        }
    }

    /// Sends `first` and then `count` times `chunk` with chunked transfer encoding.
    static func sendChunked(port: Int, path: String, token: String, first: String = "{\"username\":\"a\",",
                            chunk: String, count: Int, contentType: String = "application/json") async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let chunks = [ByteBuffer(string: first)] + Array(repeating: ByteBuffer(string: chunk), count: count)
        let stream = AsyncStream<ByteBuffer> { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
        request.body = .stream(stream, length: .unknown)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    @Test("a sale whose proceeds do not cover the fee is refused as insufficient_funds and changes nothing")
    func saleBelowTheFee() async throws {
        try await TestApp.run(configure: { $0.tradeFee = Decimal(string: "1.00")! }) { client in
            try await client.seedTradingMarket()
            let token = try await client.register("yannick").token
            _ = try await client.tradeOK("buy", "TENTH", 3, token: token)
            let before = String(buffer: try await client.get("/api/portfolio", token: token).body)
            let refused = try await client.trade("sell", #"{"symbol":"TENTH","amount":3}"#, token: token)
            #expect(refused.status == .unprocessableContent)
            #expect(try decodeProblem(refused).code == "insufficient_funds")
            #expect(String(buffer: try await client.get("/api/portfolio", token: token).body) == before)
            // Ten shares bring 1.00, which pays the fee.
            _ = try await client.tradeOK("buy", "TENTH", 7, token: token)
            #expect(try await client.trade("sell", #"{"symbol":"TENTH","amount":10}"#, token: token).status == .ok)
        }
    }
}

// MARK: Production settings

extension HardeningTests {
    /// The `server` service's environment in docker-compose.yml, as `KEY: value` lines.
    static func composeEnvironment() throws -> [String: String] {
        let text = try String(contentsOf: TestApp.repositoryRoot.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let server = try #require(text.components(separatedBy: "\n  server:\n").last)
        let block = try #require(server.components(separatedBy: "    environment:\n").dropFirst().first)
        var variables: [String: String] = [:]
        for line in block.split(separator: "\n") {
            guard line.hasPrefix("      "), let colon = line.firstIndex(of: ":") else { break }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            variables[line[..<colon].trimmingCharacters(in: .whitespaces)] = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return variables
    }

    @Test("docker compose runs the server as production and cannot start it without a JWT_SECRET")
    func composeRunsAsProduction() throws {
        var variables = try Self.composeEnvironment()
        #expect(variables["ENVIRONMENT"] == "production")
        // `${JWT_SECRET:?...}`: compose itself refuses to start when the variable is unset.
        #expect(variables["JWT_SECRET"]?.hasPrefix("${JWT_SECRET:?") == true)
        variables["JWT_SECRET"] = nil
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: variables).validateForEnvironment() }
        variables["JWT_SECRET"] = String(repeating: "k", count: 48)
        try AppConfiguration(environment: variables).validateForEnvironment()
    }

    @Test("throttle settings are read from the environment and refused when they do not parse")
    func throttleSettings() throws {
        let configuration = try AppConfiguration(environment: [
            "LOGIN_FAILURES_PER_USERNAME": "5", "LOGIN_FAILURES_PER_ADDRESS": "20", "LOGIN_FAILURES_GLOBAL": "300",
            "REGISTRATIONS_PER_ADDRESS": "7", "TRUSTED_PROXIES": "10.0.0.1", "ADMIN_UPLOAD_MAX_MB": "2",
        ])
        #expect(configuration.throttles.failuresPerUsername == 5)
        #expect(configuration.throttles.failuresPerAddress == 20)
        #expect(configuration.throttles.failuresOverall == 300)
        #expect(configuration.throttles.registrationsPerAddress == 7)
        #expect(configuration.trustedProxies == (try TrustedProxies(parsing: "10.0.0.1")))
        #expect(configuration.adminUploadLimit == 2 << 20)
        #expect(AppConfiguration().throttles == AccountThrottles.Settings())
        for bad in [["LOGIN_FAILURES_PER_USERNAME": "0"], ["TRUSTED_PROXIES": "example.org"], ["REGISTRATIONS_PER_ADDRESS": "many"]] {
            #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: bad) }
        }
    }
}
