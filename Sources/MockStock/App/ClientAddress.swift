import Foundation
import Hummingbird
import NIOCore

/// Which peers may say who the client is (`TRUSTED_PROXIES`: addresses and CIDR ranges,
/// comma-separated). The client's address is the connection's peer, unless that peer is
/// a trusted proxy: then `X-Forwarded-For` is read from its right end, skipping trusted
/// proxies, and the first address not trusted is the client. A client cannot choose its
/// address by sending the header itself, because only trusted hops are believed.
public struct TrustedProxies: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]
        let prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for (a, b) in zip(address, bytes) where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != b & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let ranges: [Range]

    public init() { ranges = [] }

    /// Parses `TRUSTED_PROXIES`, e.g. `127.0.0.1, 10.0.0.0/8, ::1`.
    public init(parsing text: String) throws {
        ranges = try text.split(separator: ",").map { entry in
            let parts = entry.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let bytes = Self.bytes(of: String(parts[0])) else {
                throw ConfigurationError("TRUSTED_PROXIES holds \"\(entry)\", which is not an IP address or CIDR range")
            }
            let length = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let length, (0...(bytes.count * 8)).contains(length) else {
                throw ConfigurationError("TRUSTED_PROXIES holds \"\(entry)\", whose prefix length is not valid")
            }
            return Range(bytes: bytes, prefixLength: length)
        }
    }

    func trusts(_ address: [UInt8]) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The client's address as text: `peer` (the connection's), or, when the peer is
    /// trusted, the first untrusted hop of `forwardedFor` counted from the right.
    /// "unknown" when there is no peer address (a Unix socket, an in-process test).
    public func clientAddress(peer: String?, forwardedFor: [String]) -> String {
        guard let peer, var current = Self.bytes(of: peer) else { return peer ?? "unknown" }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard trusts(current), let next = Self.bytes(of: hop) else { break }
            current = next
        }
        return Self.text(of: current)
    }

    /// The address's bytes: 4 for IPv4 (also when written as IPv4-mapped IPv6), 16 for IPv6.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        return Array(bytes.prefix(12)) == mappedPrefix ? Array(bytes.suffix(4)) : bytes
    }

    /// The canonical text of an address (so one client has one throttle key).
    static func text(of bytes: [UInt8]) -> String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        return ok ? String(cString: buffer) : "unknown"
    }
}

extension AppRequestContext {
    /// The client's address, believing `X-Forwarded-For` only from trusted proxies.
    func clientAddress(of request: Request, trusting proxies: TrustedProxies) -> String {
        proxies.clientAddress(
            peer: peerAddress?.ipAddress,
            forwardedFor: request.headers[values: .init("X-Forwarded-For")!]
        )
    }
}
