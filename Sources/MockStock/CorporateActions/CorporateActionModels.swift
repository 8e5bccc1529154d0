import Foundation
import Hummingbird
import Postgres

/// What happened to a stock: a split (new shares per old share) or a cash dividend.
enum CorporateActionKind: String, Codable, Sendable, PostgresCodable {
    case split, dividend
}

/// A corporate action as clients see it.
struct CorporateAction: ResponseEncodable, Sendable {
    let id: Int
    let symbol: String
    let kind: CorporateActionKind
    let exDate: String
    @NullEncoded var ratio: String?
    @NullEncoded var amount: String?
    /// `prices` (read from the daily bars) or `admin`.
    let source: String
}

struct CorporateActionList: ResponseEncodable {
    let items: [CorporateAction]
}

/// `POST /api/admin/corporate-actions` as sent.
struct CorporateActionInput: Decodable, Sendable {
    let symbol: String
    let kind: String
    let exDate: String
    let ratio: DecimalInput?
    let amount: DecimalInput?
}

/// An action that passed every check that needs no database.
struct NewCorporateAction: Sendable {
    static let largest = Decimal(1_000_000)

    let symbol: String
    let kind: CorporateActionKind
    let exDate: String
    let ratio: Decimal?
    let amount: Decimal?

    init(_ input: CorporateActionInput) throws {
        symbol = Symbol.normalize(input.symbol)
        guard Symbol.isValid(symbol) else { throw MarketError.unknownSymbol(symbol) }
        guard let kind = CorporateActionKind(rawValue: input.kind) else { throw InvalidInput("kind must be split or dividend.") }
        self.kind = kind
        guard CalendarDay.isValid(input.exDate) else {
            throw InvalidInput("exDate must be a real day written YYYY-MM-DD.")
        }
        exDate = input.exDate
        switch kind {
        case .split:
            guard input.amount == nil else { throw InvalidInput("A split has a ratio, not an amount.") }
            guard let ratio = input.ratio?.value, ratio > 0, ratio <= Self.largest, ratio != 1, ratio.rounded(6) == ratio else {
                throw InvalidInput("ratio must be above 0 (and not 1), at most 1000000, with at most 6 decimals: \"4\" is 4-for-1, \"0.5\" 1-for-2.")
            }
            self.ratio = ratio
            amount = nil
        case .dividend:
            guard input.ratio == nil else { throw InvalidInput("A dividend has an amount, not a ratio.") }
            guard let amount = input.amount?.value, amount >= 0, amount <= Self.largest, amount.rounded(6) == amount else {
                throw InvalidInput("amount must be 0 or more cash per share, at most 1000000, with at most 6 decimals.")
            }
            self.amount = amount
            ratio = nil
        }
    }
}

/// What corporate actions refuse.
enum CorporateActionError: Error, Equatable {
    /// The symbol already has an action of this kind on that day.
    case alreadyRecorded
}
