import Foundation
import Hummingbird

/// `GET /api/analytics/correlation`: the Pearson correlation of each pair of symbols'
/// daily total returns over a range, on the days all of them have one.
struct Correlation: ResponseEncodable, Sendable {
    let from: String
    let to: String
    let symbols: [String]
    /// Days with a return for every symbol.
    let observations: Int
    /// `matrix[i][j]` for `symbols[i]` and `symbols[j]`, four decimals; null where a
    /// series does not move.
    let matrix: [[String?]]
}

/// `GET /api/analytics/compare`: each symbol's total-return series rebased to 100 at its
/// first day in the range.
struct Comparison: ResponseEncodable, Sendable {
    struct Point: Encodable, Sendable {
        let date: String
        let value: String
    }

    struct Series: Encodable, Sendable {
        let symbol: String
        let points: [Point]
    }

    let from: String
    let to: String
    let series: [Series]
}

struct ComparisonService: Sendable {
    let store: ComparisonStore
    let history: ValueHistoryService

    static let maxSymbols = 20

    func correlation(symbols text: String?, from: String?, to: String?) async throws -> Correlation {
        let symbols = try await checked(text, least: 2)
        let (first, last) = try range(from, try await lastDay(to, symbols))
        let (pairs, days) = try await store.correlations(symbols, from: first, to: last)
        let matrix = symbols.map { row in
            symbols.map { column -> String? in
                let key = row <= column ? "\(row)|\(column)" : "\(column)|\(row)"
                return (pairs[key] ?? nil).map { String(format: "%.4f", $0) }
            }
        }
        return Correlation(from: first, to: last, symbols: symbols, observations: days, matrix: matrix)
    }

    func comparison(symbols text: String?, from: String?, to: String?) async throws -> Comparison {
        let symbols = try await checked(text, least: 1)
        let (first, last) = try range(from, try await lastDay(to, symbols))
        let rows = try await store.rebased(symbols, from: first, to: last)
        let series = symbols.map { symbol in
            Comparison.Series(symbol: symbol, points: rows.filter { $0.symbol == symbol }.map {
                Comparison.Point(date: $0.day, value: $0.value.moneyString)
            })
        }
        return Comparison(from: first, to: last, series: series)
    }

    /// Symbols as listed (each once, in the order given), known instruments.
    private func checked(_ text: String?, least: Int) async throws -> [String] {
        var symbols: [String] = []
        for symbol in (text ?? "").split(separator: ",").map({ Symbol.normalize(String($0)) }) where !symbols.contains(symbol) {
            symbols.append(symbol)
        }
        guard (least...Self.maxSymbols).contains(symbols.count), symbols.allSatisfy(Symbol.isValid) else {
            throw InvalidInput("symbols must list \(least) to \(Self.maxSymbols) symbols, comma-separated.")
        }
        if let unknown = try await store.unknown(symbols).first { throw MarketError.unknownSymbol(unknown) }
        return symbols
    }

    private func lastDay(_ to: String?, _ symbols: [String]) async throws -> String? {
        if let to { return to }
        return try await store.lastDay(symbols)
    }

    /// `to` defaults to the symbols' last close (else today), `from` to a year before it;
    /// at most ten years.
    private func range(_ from: String?, _ to: String?) throws -> (String, String) {
        let last = to ?? history.clock.today()
        guard let end = history.date(last) else { throw InvalidInput("to must be a day, YYYY-MM-DD.") }
        let first = from ?? history.dayString(Calendar(identifier: .gregorian).date(byAdding: .year, value: -1, to: end)!)
        guard let start = history.date(first), start <= end else { throw InvalidInput("from must not be after to.") }
        guard end.timeIntervalSince(start) <= Double(ValueHistoryService.maximumYears) * 366 * 86_400 else {
            throw InvalidInput("A range covers at most \(ValueHistoryService.maximumYears) years.")
        }
        return (first, last)
    }
}
