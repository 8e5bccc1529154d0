import Crypto
import Foundation

extension String {
    /// The SHA-256 of the text's UTF-8 bytes in lower-case hex: a fixed-size key for text
    /// of any size (request fingerprints, throttle keys).
    var sha256Hex: String {
        SHA256.hash(data: Data(utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
