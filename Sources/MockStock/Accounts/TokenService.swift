import Foundation
import JWTKit

/// The claims of an access token.
struct AccessToken: JWTPayload {
    static let issuer = "mockstock"
    static let audience = "mockstock-api"
    /// Clock difference tolerated between servers for `iat`.
    static let leeway: TimeInterval = 60

    let sub: SubjectClaim
    let iss: IssuerClaim
    let aud: AudienceClaim
    let iat: IssuedAtClaim
    let exp: ExpirationClaim
    /// The user's token version when issued; logout and password change bump it.
    let ver: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        guard iss.value == Self.issuer else {
            throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "unexpected issuer")
        }
        try aud.verifyIntendedAudience(includes: Self.audience)
        guard iat.value <= Date().addingTimeInterval(Self.leeway) else {
            throw JWTError.claimVerificationFailure(failedClaim: iat, reason: "issued in the future")
        }
    }

    var userID: Int? { Int(sub.value) }
}

/// Issues and verifies HS256 access tokens.
public struct TokenService: Sendable {
    private let keys: JWTKeyCollection
    public let lifetime: Duration
    /// Tokens already verified, by their exact text: a client sends the same token with
    /// every request, and checking the signature and claims again each time is wasted
    /// work. Expiry is still checked on every use; a token is remembered no longer than a
    /// token lives.
    private let verified: ExpiringCache<String, AccessToken>

    /// `secret` must hold at least 32 bytes (256 bits).
    public init(secret: [UInt8], lifetime: Duration) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.lifetime = lifetime
        verified = ExpiringCache(lifetime: lifetime, capacity: 50_000)
    }

    func issue(userID: Int, version: Int, now: Date = Date()) async throws -> (token: String, expiresAt: Date) {
        // Whole seconds, as the token stores them, so the answer's expiresAt matches the token.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let expiresAt = issuedAt.addingTimeInterval(lifetime.inSeconds)
        let claims = AccessToken(
            sub: SubjectClaim(value: String(userID)),
            iss: IssuerClaim(value: AccessToken.issuer),
            aud: AudienceClaim(value: AccessToken.audience),
            iat: IssuedAtClaim(value: issuedAt),
            exp: ExpirationClaim(value: expiresAt),
            ver: version
        )
        return (try await keys.sign(claims), expiresAt)
    }

    /// The token's claims, or nil for anything not signed by us with HS256 and currently valid.
    func verify(_ token: String) async -> AccessToken? {
        if let claims = verified.value(for: token) {
            return claims.exp.value > Date() ? claims : nil
        }
        guard let claims = await verifySignatureAndClaims(token) else { return nil }
        verified.store(claims, for: token)
        return claims
    }

    private func verifySignatureAndClaims(_ token: String) async -> AccessToken? {
        // Pin the algorithm: refuse `none`, RS256 and everything else before looking further.
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let headerJSON = Self.base64URLDecode(header),
            let fields = try? JSONDecoder().decode(Header.self, from: headerJSON),
            fields.alg == "HS256"
        else { return nil }
        return try? await keys.verify(token, as: AccessToken.self)
    }

    private struct Header: Decodable {
        let alg: String
    }

    private static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
