import Foundation

/// Ticker symbols: upper-case, 1–12 of letters, digits, '.' and '-', starting with a
/// letter or digit — the pattern of `instruments.symbol`'s check (sql/migrations/0028_baseline.sql).
enum Symbol {
    static func normalize(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).uppercased()
    }

    static func isValid(_ symbol: String) -> Bool {
        symbol.wholeMatch(of: /[A-Z0-9][A-Z0-9.\-]{0,11}/) != nil
    }
}
