import Foundation

/// Ticker symbols: upper-case, 1–12 of letters, digits, '.' and '-', starting with a
/// letter or digit — the pattern of `instruments.symbol`'s check (sql/migrations/0028_baseline.sql).
///
/// A scenario league's instruments are stored as `SYMBOL@LEAGUE` (sql/migrations/0058_scenario_leagues.sql):
/// a client names them by the symbol alone, in a portfolio of that league
/// (`TradingRules.instrument`), and every answer shows them so (`shown`).
enum Symbol {
    /// How an instrument is shown: its stored symbol without a scenario league's `@LEAGUE`.
    static func shown(_ stored: String) -> String {
        guard let at = stored.utf8.firstIndex(of: UInt8(ascii: "@")) else { return stored }
        return String(stored[..<at])
    }

    /// The stored symbol of `symbol` in the market of scenario league `league` (nil: the
    /// real market's, the symbol itself).
    static func stored(_ symbol: String, inLeague league: Int?) -> String {
        league.map { "\(symbol)@\($0)" } ?? symbol
    }

    /// Whether a stored symbol is a scenario league's instrument.
    static func isLeagues(_ stored: String) -> Bool {
        stored.utf8.contains(UInt8(ascii: "@"))
    }

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
