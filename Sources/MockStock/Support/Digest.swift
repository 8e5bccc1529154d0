import Crypto
import Foundation

extension String {
    /// The SHA-256 of the text's UTF-8 bytes in lower-case hex: a fixed-size key for text
    /// of any size (request fingerprints, throttle keys).
    var sha256Hex: String {
        var text = self
        return text.withUTF8 { SHA256.hash(data: $0) }.lowercaseHex
    }
}

extension Sequence<UInt8> {
    /// The bytes in lower-case hex, two digits each (`String(format:)` per byte costs a
    /// format parse and a bridged string each: most of a request fingerprint's time).
    var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}

extension UUID {
    /// A UUID that is always the same for the same name (the first 16 bytes of its
    /// SHA-256, marked as a name-based UUID, RFC 9562 §5.8).
    init(named name: String) {
        var bytes = Array(SHA256.hash(data: Data(name.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        self.init(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                         bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
