import Foundation
import Postgres

/// The European Central Bank's daily reference rates (units of a currency per euro) and
/// every pair derived from them through the euro (`fx_rate` in SQL, the one definition).
struct FxStore: Sendable {
    let pool: PostgresConnectionPool

    /// One currency's rate on one day, as the file gives it.
    struct Rate: Sendable {
        let currency: String
        let day: String
        let perEuro: Decimal
    }

    /// Rates from the ECB's CSV: a `Date` column, then one column per currency, `N/A` (or
    /// nothing) where none was published. All or nothing; a bad cell is named by its line.
    static func parse(_ csv: String) throws -> [Rate] {
        var lines = csv.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).makeIterator()
        guard let header = lines.next()?.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
              header.first?.trimmingCharacters(in: .whitespaces) == "Date"
        else { throw InvalidInput("line 1: the header must start with Date, then the currencies (USD,JPY,...).") }
        let currencies = Array(header.dropFirst()).map { $0.trimmingCharacters(in: .whitespaces) }
        for currency in currencies where !currency.isEmpty && (!FxCurrency.isCode(currency) || currency == "EUR") {
            throw InvalidInput("line 1: \(currency.prefix(10)) is not a currency code (three capital letters, not EUR).")
        }
        var rates: [Rate] = []
        var number = 1
        while let line = lines.next() {
            number += 1
            if line.allSatisfy(\.isWhitespace) { continue }
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let day = cells.first, CalendarDay.isValid(day) else {
                throw InvalidInput("line \(number): the date must be YYYY-MM-DD.")
            }
            guard cells.count - 1 <= currencies.count else { throw InvalidInput("line \(number): more cells than the header names.") }
            for (currency, cell) in zip(currencies, cells.dropFirst()) where !cell.isEmpty && cell != "N/A" {
                guard !currency.isEmpty, let value = Decimal(exactly: cell), value > 0, value < 1_000_000_000 else {
                    throw InvalidInput("line \(number): \(currency) must be a positive decimal number or N/A.")
                }
                rates.append(Rate(currency: currency, day: day, perEuro: value))
            }
        }
        guard !rates.isEmpty else { throw InvalidInput("The file holds no rates.") }
        return rates
    }

    /// Stores rates, replacing those of the same currency and day; how many.
    @discardableResult
    func store(_ rates: [Rate], audit: AuditEntry? = nil) async throws -> Int {
        try await pool.withTransaction { session in
            var stored = 0
            for start in stride(from: 0, to: rates.count, by: 20_000) {
                let batch = rates[start..<min(start + 20_000, rates.count)]
                stored += try await session.execute(
                    """
                    INSERT INTO fx_rates (currency, day, per_euro)
                    SELECT * FROM unnest(\(batch.map(\.currency))::text[], \(batch.map(\.day))::date[], \(batch.map(\.perEuro))::numeric[])
                    ON CONFLICT (currency, day) DO UPDATE SET per_euro = EXCLUDED.per_euro
                    """
                )
            }
            if var audit {
                audit.details["rows"] = .number(stored)
                try await AuditStore.record(audit, in: session)
            }
            return stored
        }
    }

    func isEmpty() async throws -> Bool {
        try await pool.query("SELECT NOT EXISTS (SELECT 1 FROM fx_rates)").decodeColumn(Bool.self) == [true]
    }

    /// Units of `to` per one `from` on `day` (the latest rates by then), with their day.
    func rate(from: String, to: String, on day: String) async throws -> (rate: Decimal, day: String)? {
        try await pool.query("SELECT rate, day::text FROM fx_rate(\(from), \(to), \(day)::date)")
            .decode((Decimal, String).self).first.map { (rate: $0.0, day: $0.1) }
    }

    /// Units of `to` per one `from` on each of `days` (the latest rates by each); days
    /// without one are left out.
    func rates(from: String, to: String, days: [String]) async throws -> [String: Decimal] {
        let rows = try await pool.query(
            """
            SELECT d::text, r.rate FROM unnest(\(days)::date[]) d CROSS JOIN LATERAL fx_rate(\(from), \(to), d) r
            """
        ).decode((String, Decimal).self)
        return Dictionary(rows.map { ($0.0, $0.1) }) { first, _ in first }
    }

    /// Every currency's rate against `base` on `day`.
    func rates(base: String, on day: String) async throws -> [(currency: String, rate: Decimal, day: String)] {
        try await pool.query(
            """
            SELECT c.currency, r.rate, r.day::text
            FROM (SELECT DISTINCT currency FROM fx_rates UNION SELECT 'EUR') c
            CROSS JOIN LATERAL fx_rate(\(base), c.currency, \(day)::date) r
            WHERE c.currency <> \(base)
            ORDER BY c.currency
            """
        ).decode((String, Decimal, String).self).map { (currency: $0.0, rate: $0.1, day: $0.2) }
    }

    /// A pair's rate on each day one of its currencies was published, from `first` to `last`.
    func series(from: String, to: String, first: String, last: String) async throws -> [(day: String, rate: Decimal)] {
        try await pool.query(
            """
            SELECT d.day::text, r.rate
            FROM (SELECT DISTINCT day FROM fx_rates WHERE currency IN (\(from), \(to)) AND day BETWEEN \(first)::date AND \(last)::date) d
            CROSS JOIN LATERAL fx_rate(\(from), \(to), d.day) r
            ORDER BY d.day
            """
        ).decode((String, Decimal).self).map { (day: $0.0, rate: $0.1) }
    }
}

/// A rate now: units of one currency per another (or per euro), and when it was set.
public struct FxQuote: Sendable, Equatable {
    public let rate: Decimal
    public let asOf: Date
}

extension FxStore {
    /// Units of each of `currencies` (not the euro) per euro now (`fx_now`): a rate set
    /// since `liveSince` (nil: none, as when replaying a day), else the latest reference
    /// rate by `day` (nil: the latest there is). Currencies with neither are left out.
    func now(_ currencies: [String], day: String?, liveSince: Date?) async throws -> [String: FxQuote] {
        guard !currencies.isEmpty else { return [:] }
        let rows = try await pool.query(
            """
            SELECT currency, per_euro, as_of
            FROM fx_now(\(currencies)::text[], \(day)::date, coalesce(\(liveSince)::timestamptz, 'infinity'))
            """
        ).decode((String, Decimal, Date).self)
        return Dictionary(rows.map { ($0.0, FxQuote(rate: $0.1, asOf: $0.2)) }) { first, _ in first }
    }

    /// Stores rates now (units per euro) from `source`, replacing each currency's last.
    func save(_ quotes: [String: FxQuote], source: String) async throws {
        try await pool.withConnection { try await Self.save(quotes, source: source, in: $0) }
    }

    static func save(_ quotes: [String: FxQuote], source: String, in session: PostgresSession) async throws {
        guard !quotes.isEmpty else { return }
        let currencies = Array(quotes.keys)
        try await session.execute(
            """
            INSERT INTO fx_quotes AS q (currency, per_euro, as_of, source)
            SELECT * , \(source) FROM unnest(\(currencies)::text[], \(currencies.map { quotes[$0]!.rate })::numeric[],
                                             \(currencies.map { quotes[$0]!.asOf })::timestamptz[])
            ON CONFLICT (currency) DO UPDATE SET per_euro = excluded.per_euro, as_of = excluded.as_of, source = excluded.source
            """
        )
    }

    /// The currencies the ECB no longer publishes, with the day of their last reference
    /// rate: those whose last rate is more than `FxStore.publishedWithinDays` older than the
    /// newest rate of any currency.
    /// On a past `day`: those whose last rate up to it is that much older than the day.
    func discontinued(on day: String? = nil) async throws -> [String: String] {
        let rows = try await pool.query(
            """
            WITH last AS (
                SELECT currency, max(day) AS day FROM fx_rates
                WHERE \(day)::date IS NULL OR day <= \(day)::date GROUP BY currency
            )
            SELECT currency, to_char(day, 'YYYY-MM-DD') FROM last
            WHERE day < coalesce(\(day)::date, (SELECT max(day) FROM last)) - \(Self.publishedWithinDays)::int
            """
        ).decode((String, String).self)
        return Dictionary(rows.map { ($0.0, $0.1) }) { first, _ in first }
    }

    /// A currency whose last reference rate is older than this (in days, against the newest)
    /// is no longer published: the ECB skips holidays, never a month.
    static let publishedWithinDays = 31

    /// Every currency with a reference rate, and the euro.
    func currencies() async throws -> [String] {
        try await pool.query("SELECT DISTINCT currency FROM fx_rates UNION SELECT 'EUR' ORDER BY 1").decodeColumn(String.self)
    }
}

enum FxCurrency {
    /// The currency stocks are quoted and personal portfolios held in.
    static let dollar = "USD"

    /// A dollar price in another currency at `rate` (units of it per dollar), to four
    /// decimals, as the SQL view `holding_values` rounds it; unchanged at a rate of 1. A fill's price:
    /// its rate carries the league's spread, which valuations (`holding_values`) leave out.
    static func price(_ dollars: Decimal, at rate: Decimal) -> Decimal {
        rate == 1 ? dollars : (dollars * rate).rounded(4)
    }

    /// Three capital letters.
    static func isCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }
}
