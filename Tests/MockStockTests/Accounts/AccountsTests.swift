import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import MockStock
import Postgres
import Testing
import TestSupport

/// What register and login answer.
struct SessionBody: Decodable {
    struct UserBody: Decodable, Equatable {
        let id: Int
        let username: String
        let role: String
        let createdAt: String
    }

    let user: UserBody
    let token: String
    let expiresAt: String
}

extension TestClientProtocol {
    func post(_ uri: String, json: String, token: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    func get(_ uri: String, token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: uri, method: .get, headers: headers)
    }

    func register(_ username: String, password: String = "correct horse") async throws -> SessionBody {
        let response = try await post("/api/auth/register", json: #"{"username":"\#(username)","password":"\#(password)"}"#)
        #expect(response.status == .created)
        return try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body))
    }

    func login(_ username: String, password: String = "correct horse") async throws -> TestResponse {
        try await post("/api/auth/login", json: #"{"username":"\#(username)","password":"\#(password)"}"#)
    }
}

@Suite("Accounts and authentication")
struct AccountsTests {
    @Test("register, log in and read /api/me; the User shape is exactly id, username, role, createdAt, and /api/me adds displayName and managedBy (null unless managed)")
    func registerLoginMe() async throws {
        try await TestApp.run { client in
            let registered = try await client.register("Alice")
            #expect(registered.user.username == "Alice")
            #expect(registered.user.role == "player")

            let login = try await client.login("alice")
            #expect(login.status == .ok)
            let session = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: login.body))
            #expect(session.user == registered.user)
            let expiresAt = try #require(ISO8601DateFormatter().date(from: session.expiresAt))
            #expect(abs(expiresAt.timeIntervalSinceNow - 3600) < 5)

            let me = try await client.get("/api/me", token: session.token)
            #expect(me.status == .ok)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer: me.body)) as? [String: Any])
            #expect(Set(object.keys) == ["id", "username", "role", "createdAt", "displayName", "managedBy"])
            #expect(object["displayName"] is NSNull && object["managedBy"] is NSNull)
            #expect(object["id"] as? Int == registered.user.id)
            #expect(ISO8601DateFormatter().date(from: object["createdAt"] as? String ?? "") != nil)
        }
    }

    @Test("registration funds the personal portfolio with the starting cash, recorded as a cash movement")
    func registrationCreatesPortfolio() async throws {
        try await TemporaryDatabase.with { database in
            let user = try await TestApp.run(on: database, configure: { $0.startingCash = Decimal(string: "2500.50")! }) { client in
                try await client.register("funded").user
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let rows = try await pool.query(
                """
                SELECT p.cash, p.league_id IS NULL, m.kind, m.amount
                FROM portfolios p JOIN cash_movements m ON m.portfolio_id = p.id
                WHERE p.user_id = \(user.id)
                """
            ).decode((Decimal, Bool, String, Decimal).self)
            await pool.close()
            #expect(rows.count == 1)
            #expect(rows.first?.0 == Decimal(string: "2500.50"))
            #expect(rows.first?.1 == true)
            #expect(rows.first?.2 == "starting_cash")
            #expect(rows.first?.3 == Decimal(string: "2500.50"))
        }
    }

    @Test("a role in the registration body is ignored: everyone registers as a player")
    func massAssignmentIgnored() async throws {
        try await TestApp.run { client in
            let response = try await client.post(
                "/api/auth/register", json: #"{"username":"mallory","password":"long enough","role":"admin","id":1}"#
            )
            #expect(response.status == .created)
            let session = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body))
            #expect(session.user.role == "player")
        }
    }

    @Test("a username taken in any case is 409 and creates nothing")
    func duplicateUsername() async throws {
        try await TestApp.run { client in
            _ = try await client.register("Bob_1")
            for name in ["Bob_1", "bob_1", "BOB_1"] {
                let response = try await client.post("/api/auth/register", json: #"{"username":"\#(name)","password":"another pass"}"#)
                #expect(response.status == .conflict)
                #expect(try decodeProblem(response).code == "conflict")
            }
            #expect(try await client.login("bob_1", password: "another pass").status == .unauthorized)
        }
    }

    @Test("invalid usernames, passwords and emails are 422", arguments: [
        #"{"username":"ab","password":"long enough"}"#,
        #"{"username":"\#(String(repeating: "a", count: 33))","password":"long enough"}"#,
        #"{"username":"has space","password":"long enough"}"#,
        #"{"username":"ünïcode","password":"long enough"}"#,
        #"{"username":"x'; DROP TABLE users; --","password":"long enough"}"#,
        #"{"username":"carol","password":"short"}"#,
        #"{"username":"carol","password":"\#(String(repeating: "p", count: 129))"}"#,
        #"{"username":"carol","password":"long enough","email":"not-an-email"}"#,
        #"{"username":123,"password":"long enough"}"#,
        #"{"password":"long enough"}"#,
    ])
    func invalidRegistration(_ body: String) async throws {
        try await TestApp.run { client in
            let response = try await client.post("/api/auth/register", json: body)
            #expect(response.status == .unprocessableContent)
            #expect(try decodeProblem(response).code == "validation_failed")
            #expect(try await client.login("carol", password: "long enough").status == .unauthorized)
        }
    }

    @Test("boundary lengths are accepted: 3 and 32 character usernames, 8 and 128 character passwords")
    func boundaries() async throws {
        try await TestApp.run { client in
            _ = try await client.register("abc", password: "12345678")
            _ = try await client.register(String(repeating: "z", count: 32), password: String(repeating: "p", count: 128))
            _ = try await client.register("d.e-f_9", password: "pässwörd✓")
            #expect(try await client.login("d.e-f_9", password: "pässwörd✓").status == .ok)
        }
    }

    @Test("a malformed or missing body is 400", arguments: ["{not json", "", "[1,2", "\"just a string"])
    func malformedJSON(_ body: String) async throws {
        try await TestApp.run { client in
            let response = try await client.post("/api/auth/register", json: body)
            #expect(response.status == .badRequest)
            #expect(try decodeProblem(response).code == "bad_request")
        }
    }

    @Test("a missing, malformed or garbage token is 401 on every protected route")
    func missingToken() async throws {
        try await TestApp.run { client in
            let session = try await client.register("dave")
            for authorization in [nil, "", "Bearer", "Bearer ", "Basic \(session.token)", "Bearer garbage", "Bearer a.b.c",
                                  "Bearer \(session.token)x", session.token] {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                for (uri, method) in [("/api/me", HTTPRequest.Method.get), ("/api/auth/logout", .post), ("/api/no-such-route", .get)] {
                    let response = try await client.execute(uri: uri, method: method, headers: headers)
                    #expect(response.status == .unauthorized, "\(method) \(uri) with \(authorization ?? "nothing")")
                    #expect(try decodeProblem(response).code == "unauthorized")
                }
            }
            // With a valid token, an unknown API route is an ordinary 404.
            #expect(try await client.get("/api/no-such-route", token: session.token).status == .notFound)
        }
    }

    @Test("forged tokens are refused: none, other key, other algorithm, wrong iss or aud, no exp, expired, tampered")
    func forgedTokens() async throws {
        try await TestApp.run { client in
            let session = try await client.register("erin")
            let id = String(session.user.id)
            #expect(try await client.get("/api/me", token: session.token).status == .ok)

            let now = Date()
            let good = ForgedClaims(sub: id, iss: "mockstock", aud: "mockstock-api", iat: now, exp: now + 600, ver: 0)
            // The forging itself is sound: this one, signed with the server's key, is accepted.
            #expect(try await client.get("/api/me", token: try await sign(good, secret: TestApp.jwtSecret)).status == .ok)

            var forged: [(String, String)] = []
            forged.append(("alg none", unsignedToken(good)))
            forged.append(("another key", try await sign(good, secret: "a-completely-different-secret-of-32-bytes!")))
            forged.append(("HS512", try await sign(good, secret: TestApp.jwtSecret, digest: .sha512)))
            forged.append(("HS384", try await sign(good, secret: TestApp.jwtSecret, digest: .sha384)))
            forged.append(("wrong iss", try await sign(good.with(iss: "someone-else"), secret: TestApp.jwtSecret)))
            forged.append(("wrong aud", try await sign(good.with(aud: "another-api"), secret: TestApp.jwtSecret)))
            forged.append(("expired", try await sign(good.with(exp: now - 1), secret: TestApp.jwtSecret)))
            forged.append(("future iat", try await sign(good.with(iat: now + 3600), secret: TestApp.jwtSecret)))
            forged.append(("other user", try await sign(good.with(sub: String(session.user.id + 1)), secret: TestApp.jwtSecret)))
            forged.append(("old version", try await sign(good.with(ver: -1), secret: TestApp.jwtSecret)))
            forged.append(("no exp", try await sign(NoExpiryClaims(sub: id, iss: "mockstock", aud: "mockstock-api", iat: now, ver: 0),
                                                   secret: TestApp.jwtSecret)))
            forged.append(("tampered", tamper(session.token)))
            for (name, token) in forged {
                let response = try await client.get("/api/me", token: token)
                #expect(response.status == .unauthorized, "\(name) token was accepted")
            }
        }
    }

    @Test("logout revokes every token issued before it; logging in again works")
    func logoutRevokes() async throws {
        try await TestApp.run { client in
            let first = try await client.register("frank")
            let second = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: try await client.login("frank").body))
            let logout = try await client.post("/api/auth/logout", json: "", token: first.token)
            #expect(logout.status == .noContent)
            #expect(try await client.get("/api/me", token: first.token).status == .unauthorized)
            #expect(try await client.get("/api/me", token: second.token).status == .unauthorized)
            let again = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: try await client.login("frank").body))
            #expect(try await client.get("/api/me", token: again.token).status == .ok)
        }
    }

    @Test("after a logout and a new login on one process, another process refuses the old token and accepts the new one at once")
    func loginAfterLogoutAcrossProcesses() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { a in
                try await TestApp.run(on: database) { b in
                    let old = try await a.register("hopper").token
                    #expect(try await b.get("/api/me", token: old).status == .ok)
                    #expect(try await a.post("/api/auth/logout", json: "", token: old).status == .noContent)
                    let fresh = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: try await a.login("hopper").body)).token
                    // b cached the old version a moment ago; the newer token is not refused for it.
                    #expect(try await b.get("/api/me", token: fresh).status == .ok)
                    #expect(try await b.get("/api/me", token: old).status == .unauthorized)
                }
            }
        }
    }

    @Test("a password change revokes earlier tokens and the old password")
    func passwordChange() async throws {
        try await TestApp.run { client in
            let session = try await client.register("gina", password: "first password")
            let wrong = try await client.post(
                "/api/auth/password", json: #"{"currentPassword":"not it at all","newPassword":"second password"}"#,
                token: session.token
            )
            #expect(wrong.status == .forbidden)
            let changed = try await client.post(
                "/api/auth/password", json: #"{"currentPassword":"first password","newPassword":"second password"}"#,
                token: session.token
            )
            #expect(changed.status == .ok)
            let fresh = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: changed.body))
            #expect(try await client.get("/api/me", token: session.token).status == .unauthorized)
            #expect(try await client.get("/api/me", token: fresh.token).status == .ok)
            #expect(try await client.login("gina", password: "first password").status == .unauthorized)
            #expect(try await client.login("gina", password: "second password").status == .ok)
        }
    }

    @Test("wrong username and wrong password get the same answer")
    func sameAnswerForUnknownUser() async throws {
        try await TestApp.run { client in
            _ = try await client.register("hank")
            let wrongPassword = try await client.login("hank", password: "not the password")
            let wrongUser = try await client.login("nobody_here", password: "not the password")
            #expect(wrongPassword.status == .unauthorized)
            #expect(wrongUser.status == .unauthorized)
            let a = try decodeProblem(wrongPassword)
            let b = try decodeProblem(wrongUser)
            #expect(a.code == b.code && a.detail == b.detail && a.title == b.title && a.type == b.type)
        }
    }

    @Test("more than 10 failed logins in a minute are 429 with Retry-After; other users still log in")
    func loginThrottling() async throws {
        try await TestApp.run { client in
            _ = try await client.register("ivan")
            _ = try await client.register("judy")
            for _ in 0..<10 {
                #expect(try await client.login("ivan", password: "guess guess").status == .unauthorized)
            }
            let throttled = try await client.login("IVAN", password: "correct horse")
            #expect(throttled.status == .tooManyRequests)
            #expect(try decodeProblem(throttled).code == "rate_limited")
            let retryAfter = try #require(throttled.headers[.retryAfter].flatMap(Int.init))
            #expect((1...60).contains(retryAfter))
            #expect(try await client.login("judy").status == .ok)

            for _ in 0..<11 { _ = try await client.login("ghost_user", password: "guess guess") }
            #expect(try await client.login("ghost_user", password: "guess guess").status == .tooManyRequests)
        }
    }

    @Test("no response ever contains the password or its hash")
    func noSecretsInResponses() async throws {
        try await TestApp.run { client in
            let password = "super secret words"
            var bodies: [String] = []
            let register = try await client.post("/api/auth/register", json: #"{"username":"kate","password":"\#(password)"}"#)
            bodies.append(String(buffer: register.body))
            let session = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: register.body))
            bodies.append(String(buffer: try await client.login("kate", password: password).body))
            bodies.append(String(buffer: try await client.login("kate", password: "wrong wrong").body))
            bodies.append(String(buffer: try await client.get("/api/me", token: session.token).body))
            bodies.append(String(buffer: try await client.post(
                "/api/auth/register", json: #"{"username":"kate","password":"\#(password)"}"#).body))
            for body in bodies {
                #expect(!body.contains(password))
                #expect(!body.contains("scrypt"))
                #expect(!body.lowercased().contains("hash"))
            }
        }
    }

    @Test("the admin from ADMIN_USERNAME/ADMIN_PASSWORD is created once and updated, never duplicated")
    func adminBootstrap() async throws {
        try await TemporaryDatabase.with { database in
            let first = try await TestApp.run(on: database, configure: {
                $0.adminUsername = "root_admin"
                $0.adminPassword = "admin password 1"
            }) { client in
                let response = try await client.login("root_admin", password: "admin password 1")
                let session = try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body))
                #expect(session.user.role == "admin")
                return session.user
            }
            // Starting again with the same settings changes nothing.
            try await TestApp.run(on: database, configure: {
                $0.adminUsername = "root_admin"
                $0.adminPassword = "admin password 1"
            }) { client in
                let session = try JSONDecoder().decode(
                    SessionBody.self, from: Data(buffer: try await client.login("root_admin", password: "admin password 1").body)
                )
                #expect(session.user == first)
            }
            // A new password replaces the old one; an existing player can be promoted.
            try await TestApp.run(on: database, configure: {
                $0.adminUsername = "ROOT_ADMIN"
                $0.adminPassword = "admin password 2"
            }) { client async throws in
                #expect(try await client.login("root_admin", password: "admin password 1").status == .unauthorized)
                #expect(try await client.login("root_admin", password: "admin password 2").status == .ok)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let admins = try await pool.query("SELECT count(*) FROM users WHERE lower(username) = 'root_admin'").decodeColumn(Int.self)
            await pool.close()
            #expect(admins == [1])
        }
    }

    @Test("making an existing player an admin keeps their password unless a new one is given; a bot's name is refused")
    func promoteKeepsPassword() async throws {
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { client in
                let amy = try await client.register("teacher_amy", password: "amy's own password")
                _ = try await client.createBot("amys_bot", token: amy.token)
            }
            let pool = PostgresConnectionPool(configuration: database.configuration)
            let configuration = TestApp.configuration(databaseURL: database.connectionString)
            let accounts = await makeAccountService(configuration: configuration, pool: pool, logger: Logger(label: "test"))
            #expect(try await accounts.ensureAdmin(username: "Teacher_Amy", password: nil, logger: Logger(label: "test")) == .promoted)
            // A bot's name is refused in words, with or without a password, and the bot stays a player.
            for password in [nil, "a password for it"] {
                await #expect(throws: InvalidInput.self) {
                    try await accounts.ensureAdmin(username: "amys_bot", password: password, logger: Logger(label: "test"))
                }
            }
            #expect(try await pool.query("SELECT role FROM users WHERE username = 'amys_bot'").decodeColumn(String.self) == ["player"])
            await #expect(throws: InvalidInput.self) {
                try await accounts.ensureAdmin(username: "nobody_yet", password: nil, logger: Logger(label: "test"))
            }
            try await TestApp.run(on: database) { client in
                let response = try await client.login("teacher_amy", password: "amy's own password")
                #expect(try JSONDecoder().decode(SessionBody.self, from: Data(buffer: response.body)).user.role == "admin")
            }
            #expect(try await accounts.ensureAdmin(username: "teacher_amy", password: "a new password", logger: Logger(label: "test"))
                == .promotedWithNewPassword)
            await pool.close()
            try await TestApp.run(on: database) { client async throws in
                #expect(try await client.login("teacher_amy", password: "amy's own password").status == .unauthorized)
                #expect(try await client.login("teacher_amy", password: "a new password").status == .ok)
            }
        }
    }
}

@Suite("Password hashing")
struct PasswordHasherTests {
    @Test("a hash is self-describing, salted, and verifies only the right password")
    func hashAndVerify() async throws {
        let hasher = PasswordHasher(parameters: .test)
        let hash = try await hasher.hash("open sesame")
        #expect(hash.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(try await hasher.verify("open sesame", against: hash))
        #expect(try await !hasher.verify("open sesame!", against: hash))
        #expect(try await hasher.hash("open sesame") != hash)
        #expect(try await !hasher.verify("open sesame", against: "not a hash"))
    }

    @Test("hashes made with other parameters still verify, and are flagged for rehashing")
    func olderParametersVerify() async throws {
        let old = try await PasswordHasher(parameters: PasswordHasher.Parameters(logN: 9, r: 8, p: 1)).hash("legacy pass")
        let current = PasswordHasher(parameters: .test)
        #expect(try await current.verify("legacy pass", against: old))
        #expect(current.needsRehash(old))
        #expect(!current.needsRehash(try await current.hash("legacy pass")))
    }

    @Test("the default profile is OWASP's scrypt N=2^17, r=8, p=1")
    func defaultProfile() throws {
        #expect(try AppConfiguration(environment: [:]).passwordHashing == .owasp)
        #expect(PasswordHasher.Parameters.owasp == PasswordHasher.Parameters(logN: 17, r: 8, p: 1))
        #expect(try AppConfiguration(environment: ["PASSWORD_HASH_PROFILE": "test"]).passwordHashing == .test)
    }
}

@Suite("Production safety")
struct ProductionConfigurationTests {
    @Test("production refuses to start without JWT_SECRET or with the test hash profile")
    func refusesUnsafeProduction() throws {
        let secret = String(repeating: "s", count: 32)
        #expect(throws: ConfigurationError.self) {
            try AppConfiguration(environment: ["ENVIRONMENT": "production"]).validateForEnvironment()
        }
        #expect(throws: ConfigurationError.self) {
            try AppConfiguration(environment: ["ENVIRONMENT": "production", "JWT_SECRET": secret, "PASSWORD_HASH_PROFILE": "test"])
                .validateForEnvironment()
        }
        try AppConfiguration(environment: ["ENVIRONMENT": "production", "JWT_SECRET": secret]).validateForEnvironment()
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["JWT_SECRET": "too short"]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["STARTING_CASH": "-5"]) }
    }
}

// MARK: - Forging tokens

struct ForgedClaims: JWTPayload {
    var sub: String
    var iss: String
    var aud: String
    var iat: Date
    var exp: Date
    var ver: Int

    enum CodingKeys: String, CodingKey { case sub, iss, aud, iat, exp, ver }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sub, forKey: .sub)
        try container.encode(iss, forKey: .iss)
        try container.encode(aud, forKey: .aud)
        try container.encode(Int(iat.timeIntervalSince1970), forKey: .iat)
        try container.encode(Int(exp.timeIntervalSince1970), forKey: .exp)
        try container.encode(ver, forKey: .ver)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}

    func with(sub: String? = nil, iss: String? = nil, aud: String? = nil, iat: Date? = nil, exp: Date? = nil, ver: Int? = nil) -> ForgedClaims {
        ForgedClaims(sub: sub ?? self.sub, iss: iss ?? self.iss, aud: aud ?? self.aud, iat: iat ?? self.iat,
                     exp: exp ?? self.exp, ver: ver ?? self.ver)
    }
}

struct NoExpiryClaims: JWTPayload {
    let sub: String
    let iss: String
    let aud: String
    let iat: Date
    let ver: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

func sign(_ payload: some JWTPayload, secret: String, digest: DigestAlgorithm = .sha256) async throws -> String {
    let keys = JWTKeyCollection()
    await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: digest)
    return try await keys.sign(payload)
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

func unsignedToken(_ claims: ForgedClaims) -> String {
    let header = base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
    let payload = base64URL(try! JSONEncoder().encode(claims))
    return "\(header).\(payload)."
}

/// Flips the subject inside the payload and keeps the original signature.
func tamper(_ token: String) -> String {
    let parts = token.split(separator: ".").map(String.init)
    var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    var json = String(decoding: Data(base64Encoded: base64)!, as: UTF8.self)
    json = json.replacingOccurrences(of: "\"ver\":0", with: "\"ver\":0,\"role\":\"admin\"")
    return [parts[0], base64URL(Data(json.utf8)), parts[2]].joined(separator: ".")
}
