import Foundation

/// A practice portfolio's trades read from CSV (`date,symbol,side,quantity,price,fee`, the
/// export's format and the one brokers' statements are easily put in): each line a trade
/// at its own price and fee, dated the close of its day. Columns may come in any order;
/// `fee` may be left out (0). Every line is checked before anything is written, and every
/// bad line is told by its number; then all the trades are made in one transaction, in
/// file order, or none.
struct TradeImport: Sendable {
    struct Row: Sendable, Equatable {
        let line: Int
        let day: String
        let symbol: String
        let side: TradeSide
        let quantity: Int
        let price: Decimal
        let fee: Decimal
    }

    static let maximumRows = 10_000
    /// At most this many bad lines are told at once.
    static let reportedErrors = 20

    /// The rows of a file, or `InvalidInput` naming the first bad line (its `line`) and
    /// telling up to `reportedErrors` of them: lines that do not read as trades, lines out
    /// of date order, days not before the market's day `through`, and symbols no
    /// instrument has (asked of `unknownSymbols` once for the whole file).
    static func rows(
        _ csv: String, before through: String, unknownSymbols: ([String]) async throws -> Set<String>
    ) async throws -> [Row] {
        var (rows, errors) = try parse(csv)
        let unknown = try await unknownSymbols(Array(Set(rows.map(\.symbol))))
        for row in rows {
            if row.day >= through {
                errors.append(InvalidInput(line: row.line, "\(row.day) is not before the market's day (\(through))."))
            } else if unknown.contains(row.symbol) {
                errors.append(InvalidInput(line: row.line, "no instrument has the symbol \(row.symbol)."))
            }
        }
        errors.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        if let first = errors.first {
            guard errors.count > 1 else { throw first }
            let told = errors.prefix(reportedErrors).map(\.detail).joined(separator: " ")
            throw InvalidInput(line: first.line ?? 1, "\(errors.count) lines are wrong; nothing was imported. \(told)")
        }
        return rows
    }

    /// The lines that read as trades, and what is wrong with the others.
    private static func parse(_ csv: String) throws -> (rows: [Row], errors: [InvalidInput]) {
        let records = CSVReader.records(in: csv).filter { !$0.isBlank }
        guard let headerRecord = records.first else { throw InvalidInput("The file is empty; its header is \(PracticePortfolios.csvHeader).") }
        let header = headerRecord.strings.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let required = ["date", "symbol", "side", "quantity", "price"]
        let missing = required.filter { !header.contains($0) }
        guard missing.isEmpty else {
            throw InvalidInput(line: headerRecord.line, "the header lacks \(missing.joined(separator: ", ")); expected \(PracticePortfolios.csvHeader).")
        }
        guard records.count - 1 <= maximumRows else { throw InvalidInput("A file holds at most \(maximumRows) trades.") }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        var rows: [Row] = []
        var errors: [InvalidInput] = []
        var previousDay = ""
        for record in records.dropFirst() {
            do {
                let row = try Self.row(record.strings, line: record.line, columns: column)
                if row.day < previousDay { throw InvalidInput(line: record.line, "\(row.day) is before the line above's \(previousDay): trades come in date order.") }
                previousDay = row.day
                rows.append(row)
            } catch let error as InvalidInput {
                errors.append(error)
            }
        }
        return (rows, errors)
    }

    private static func row(_ fields: [String], line: Int, columns: (String) -> Int?) throws -> Row {
        func field(_ name: String) -> String? {
            columns(name).flatMap { $0 < fields.count ? fields[$0].trimmingCharacters(in: .whitespaces) : nil }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let day = field("date"), CalendarDay.isValid(day), day >= PracticePortfolios.earliestDay else {
            throw InvalidInput(line: line, "date must be a day (YYYY-MM-DD) from \(PracticePortfolios.earliestDay).")
        }
        let symbol = Symbol.normalize(field("symbol") ?? "")
        guard Symbol.isValid(symbol) else { throw InvalidInput(line: line, "symbol must be 1–12 letters, digits, '.' or '-'.") }
        guard let side = field("side").flatMap({ TradeSide(rawValue: $0.lowercased()) }) else {
            throw InvalidInput(line: line, "side must be buy or sell.")
        }
        guard let text = field("quantity"), text.allSatisfy({ $0.isASCII && $0.isNumber }), text.count <= 10,
              let quantity = Int(text), (1...ShareQuantity.maximum).contains(quantity) else {
            throw InvalidInput(line: line, "quantity must be a whole number of shares from 1 to \(ShareQuantity.maximum).")
        }
        guard let price = field("price").flatMap(Decimal.init(exactly:)), price > 0, price < OrderTicket.maximumPrice,
              price.rounded(OrderTicket.priceScale) == price else {
            throw InvalidInput(line: line, "price must be above 0 and below 1000000000, with at most \(OrderTicket.priceScale) decimals.")
        }
        let fee: Decimal
        if let text = field("fee") {
            guard let value = Decimal(exactly: text), value >= 0, value < 1_000_000, value.rounded(2) == value else {
                throw InvalidInput(line: line, "fee must be 0 or more, below 1000000, in cents.")
            }
            fee = value
        } else {
            fee = 0
        }
        return Row(line: line, day: day, symbol: symbol, side: side, quantity: quantity, price: price, fee: fee)
    }
}
