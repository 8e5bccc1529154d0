import Foundation

/// A validated instrument to store.
struct Instrument: Sendable {
    let symbol: String
    let name: String
    let description: String
    let sector: String
    let currency: String

    init(symbol: String, name: String, description: String, sector: String, currency: String) {
        self.symbol = symbol
        self.name = name
        self.description = description
        self.sector = sector
        self.currency = currency
    }

    /// Validates one input; `fieldPrefix` names its place in error details ("[3]." in a
    /// JSON array, nothing in a file whose errors carry a line number).
    init(_ input: AdminController.InstrumentInput, fieldPrefix: String) throws {
        let symbol = Symbol.normalize(input.symbol)
        guard Symbol.isValid(symbol) else {
            throw InvalidInput("\(fieldPrefix)symbol must be 1–12 letters, digits, '.' or '-', starting with a letter or digit.")
        }
        let name = input.name.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(name, field: "\(fieldPrefix)name", length: 1...200)
        let currency = (input.currency ?? "USD").uppercased()
        guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw InvalidInput("\(fieldPrefix)currency must be a three-letter code such as USD.")
        }
        try TextInput.check(input.description ?? "", field: "\(fieldPrefix)description", length: 0...2000, use: .shownWithLines)
        try TextInput.check(input.sector ?? "", field: "\(fieldPrefix)sector", length: 0...100)
        self.init(
            symbol: symbol, name: name, description: input.description ?? "", sector: input.sector ?? "",
            currency: currency
        )
    }
}

extension Instrument {
    /// Instruments from CSV with a header naming `symbol` and `name` (or the S&P list's
    /// `Security`), and optionally `sector` (or `GICS Sector`), `description` and
    /// `currency`. Without a description, one is made of the sub-industry, headquarters and
    /// founding year when the file has them. A bad record is refused by its line.
    static func fromCSV(_ csv: String) throws -> [Instrument] {
        let records = CSVReader.records(in: csv).filter { !$0.isBlank }
        guard let header = records.first?.strings.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else { return [] }
        func column(_ names: String...) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let symbolColumn = column("symbol"), let nameColumn = column("name", "security") else {
            throw InvalidInput(line: records[0].line, "the header needs symbol and name (or Security) columns.")
        }
        let sector = column("sector", "gics sector")
        let description = column("description")
        let currency = column("currency")
        let subIndustry = column("gics sub-industry")
        let headquarters = column("headquarters location")
        let founded = column("founded")
        var instruments: [Instrument] = []
        var lines: [String: Int] = [:]
        for record in records.dropFirst() {
            let fields = record.strings
            guard fields.count == header.count else {
                throw InvalidInput(line: record.line, "expected \(header.count) fields, found \(fields.count).")
            }
            func value(_ column: Int?) -> String? {
                column.map { fields[$0].trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
            }
            let composed = [
                value(subIndustry).map { "\($0)." },
                value(headquarters).map { "Headquartered in \($0)." },
                value(founded).map { "Founded \($0)." },
            ].compactMap { $0 }.joined(separator: " ")
            let input = AdminController.InstrumentInput(
                symbol: fields[symbolColumn], name: fields[nameColumn],
                description: value(description) ?? (composed.isEmpty ? nil : composed),
                sector: value(sector), currency: value(currency)
            )
            let instrument: Instrument
            do {
                instrument = try Instrument(input, fieldPrefix: "")
            } catch let error as InvalidInput {
                throw InvalidInput(line: record.line, error.detail)
            }
            if let first = lines.updateValue(record.line, forKey: instrument.symbol) {
                throw InvalidInput(line: record.line, "\(instrument.symbol) already appears on line \(first).")
            }
            instruments.append(instrument)
        }
        return instruments
    }
}

/// What admin actions refuse.
enum AdminError: Error, Equatable {
    case noSuchUser
}
