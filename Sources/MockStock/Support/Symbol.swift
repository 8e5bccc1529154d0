import Foundation

/// Ticker symbols: upper-case, 1–12 of letters, digits, '.' and '-'.
enum Symbol {
    static func normalize(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).uppercased()
    }

    static func isValid(_ symbol: String) -> Bool {
        (1...12).contains(symbol.count)
            && symbol.unicodeScalars.allSatisfy { ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || $0 == "." || $0 == "-" }
    }
}
