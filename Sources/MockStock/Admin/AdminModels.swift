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
            throw InvalidInput("\(fieldPrefix)symbol must be 1–12 letters, digits, '.' or '-'.")
        }
        let name = input.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(name.count) else { throw InvalidInput("\(fieldPrefix)name must be 1–200 characters.") }
        let currency = (input.currency ?? "USD").uppercased()
        guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw InvalidInput("\(fieldPrefix)currency must be a three-letter code such as USD.")
        }
        guard (input.description ?? "").count <= 2000, (input.sector ?? "").count <= 100 else {
            throw InvalidInput("\(fieldPrefix)description is at most 2000 characters and \(fieldPrefix)sector at most 100.")
        }
        self.init(
            symbol: symbol, name: name, description: input.description ?? "", sector: input.sector ?? "",
            currency: currency
        )
    }
}

/// What admin actions refuse.
enum AdminError: Error, Equatable {
    case noSuchUser
}
