import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MockStock
import Testing

/// Defects found by the security review, each proved fixed by a test.
@Suite("Hardening")
struct HardeningTests {
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
