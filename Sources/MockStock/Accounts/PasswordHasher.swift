import Crypto
import CryptoExtras
import Foundation
import NIOPosix

/// Hashes and verifies passwords with scrypt, stored self-describing as
/// `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (unpadded base64), so the cost can be raised
/// later while older hashes still verify. Hashing runs on NIO's blocking thread pool,
/// never on an event loop or the cooperative pool; the pool's size (one thread per core)
/// also bounds the memory scrypt uses at once.
public struct PasswordHasher: Sendable {
    /// scrypt's cost: N = 2^logN, block size r, parallelism p.
    public struct Parameters: Sendable, Equatable {
        public let logN: Int
        public let r: Int
        public let p: Int

        public init(logN: Int, r: Int, p: Int) {
            self.logN = logN
            self.r = r
            self.p = p
        }

        /// OWASP's first recommendation for scrypt: N=2^17, r=8, p=1 (128 MiB, about a quarter second).
        public static let owasp = Parameters(logN: 17, r: 8, p: 1)
        /// Cheap enough for tests and benchmarks; unsafe for real passwords.
        public static let test = Parameters(logN: 10, r: 8, p: 1)
        /// For passwords the server generates (class rosters): 12 random characters carry
        /// about 59 bits, which no offline guessing exhausts, so a lower cost (16 MiB, a few
        /// milliseconds) lets a host create a class of 200 at once. Passwords people choose
        /// keep `owasp`.
        public static let generated = Parameters(logN: 14, r: 8, p: 1)

        var memory: Int { 128 * r * (1 << logN) * p }
    }

    public let parameters: Parameters
    private static let saltBytes = 16
    private static let hashBytes = 32

    public init(parameters: Parameters) {
        self.parameters = parameters
    }

    public func hash(_ password: String) async throws -> String {
        try await hash(password, parameters: parameters)
    }

    /// A password the server generated, at the lower of the configured cost and `generated`.
    public func hashGenerated(_ password: String) async throws -> String {
        try await hash(password, parameters: parameters.logN <= Parameters.generated.logN ? parameters : .generated)
    }

    private func hash(_ password: String, parameters: Parameters) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let derived = try await NIOThreadPool.singleton.runIfActive {
            try Self.derive(password, salt: salt, parameters: parameters)
        }
        return Self.encode(parameters: parameters, salt: salt, hash: derived)
    }

    /// True when `password` matches `encoded`; false for a mismatch or an unreadable hash.
    public func verify(_ password: String, against encoded: String) async throws -> Bool {
        guard let stored = Self.decode(encoded) else { return false }
        let derived = try await NIOThreadPool.singleton.runIfActive {
            try Self.derive(password, salt: stored.salt, parameters: stored.parameters)
        }
        return constantTimeEquals(derived, stored.hash)
    }

    /// Spends the same time as verifying a real hash, for logins naming no known user.
    public func verifyAgainstNothing(_ password: String) async throws {
        _ = try await verify(password, against: dummyHash)
    }

    /// Whether a stored hash uses other parameters than the current ones.
    public func needsRehash(_ encoded: String) -> Bool {
        Self.decode(encoded)?.parameters != parameters
    }

    private var dummyHash: String {
        Self.encode(
            parameters: parameters,
            salt: [UInt8](repeating: 0x5a, count: Self.saltBytes),
            hash: [UInt8](repeating: 0, count: Self.hashBytes)
        )
    }

    private static func derive(_ password: String, salt: [UInt8], parameters: Parameters) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            outputByteCount: hashBytes,
            rounds: 1 << parameters.logN,
            blockSize: parameters.r,
            parallelism: parameters.p,
            maxMemory: parameters.memory + (1 << 20)
        )
        return key.withUnsafeBytes { Array($0) }
    }

    private static func encode(parameters: Parameters, salt: [UInt8], hash: [UInt8]) -> String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(base64(salt))$\(base64(hash))"
    }

    private static func decode(_ encoded: String) -> (parameters: Parameters, salt: [UInt8], hash: [UInt8])? {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1] == "scrypt" else { return nil }
        var values: [String: Int] = [:]
        for pair in fields[2].split(separator: ",") {
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            values[String(parts[0])] = value
        }
        guard let logN = values["ln"], let r = values["r"], let p = values["p"],
            (1...24).contains(logN), (1...64).contains(r), (1...16).contains(p),
            let salt = unbase64(fields[3]), let hash = unbase64(fields[4]), !hash.isEmpty
        else { return nil }
        return (Parameters(logN: logN, r: r, p: p), salt, hash)
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    private static func unbase64(_ text: Substring) -> [UInt8]? {
        let padded = String(text) + String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: padded).map { [UInt8]($0) }
    }
}

/// Compares without stopping at the first difference, so timing reveals nothing.
func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices {
        difference |= a[index] ^ b[index]
    }
    return difference == 0
}
