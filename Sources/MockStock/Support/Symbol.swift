import Foundation

/// Ticker symbols: upper-case, 1–12 of letters, digits, '.' and '-', starting with a
/// letter or digit — the pattern of `instruments.symbol`'s check (sql/migrations/0028_baseline.sql).
enum Symbol {
    static func normalize(_ text: String) -> String {
        text.trimmingWhitespace.uppercased()
    }

    /// Checked byte by byte: a regex literal here was parsed again on every call, which
    /// cost about 15 % of the server's CPU under a trading load (it runs on every quote
    /// lookup); the rule is short enough to write out.
    static func isValid(_ symbol: String) -> Bool {
        let bytes = symbol.utf8
        guard let first = bytes.first, (1...12).contains(bytes.count), isLetterOrDigit(first) else { return false }
        return bytes.dropFirst().allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
