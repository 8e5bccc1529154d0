import Foundation
import Hummingbird

/// What went wrong with a currency, below HTTP.
enum FxError: Error {
    /// No rate between the two currencies on or before the day (an unknown code, or a day
    /// before the first rate).
    case noRate(String, String)
}

/// `GET /api/fx/rates?base=&date=`: every known currency against `base`.
struct FxRates: ResponseEncodable, Sendable {
    let base: String
    /// The latest day whose rates were used.
    let date: String
    let rates: [String: String]
    /// Without a date: when the oldest of the rates now of the currencies still published
    /// was set (absent with a date).
    let asOf: Date?
    /// The currencies the ECB no longer publishes (`FxStore.discontinued`), with the day of
    /// their last reference rate: their rates here are that last one.
    let discontinued: [String: String]
}

/// `GET /api/fx/convert?from=&to=&amount=&date=`.
struct FxConversion: ResponseEncodable, Sendable {
    let from: String
    let to: String
    let amount: String
    let rate: String
    let result: String
    let date: String
    /// Without a date: when the rate now was set (absent with a date).
    let asOf: Date?
}

/// `GET /api/fx/{BASE}{QUOTE}/chart?range=`.
struct FxChart: ResponseEncodable, Sendable {
    struct Point: Encodable, Sendable {
        let date: String
        let rate: String
    }

    let pair: String
    let points: [Point]
}

/// Exchange rates, conversions and charts: on a date, the stored ECB reference rates
/// (admins load them: `POST /api/admin/fx`, the ECB's CSV); without one, the rates now from
/// the quote provider.
struct FxController {
    let store: FxStore
    let quotes: any QuoteProvider
    let history: ValueHistoryService
    /// Largest upload accepted, in bytes (`ADMIN_UPLOAD_MAX_MB`).
    let maxUpload: Int

    /// Chart ranges, in months.
    static let ranges = ["1m": 1, "3m": 3, "6m": 6, "1y": 12, "5y": 60, "max": 12 * 100]

    func addRoutes(to api: RouterGroup<AppRequestContext>, admin: RouterGroup<AppRequestContext>) {
        api.get("fx/rates", use: rates)
        api.get("fx/convert", use: convert)
        api.get("fx/{pair}/chart", use: chart)
        admin.group("admin").add(middleware: AdminOnlyMiddleware()).add(middleware: BodyLimitMiddleware(maxBytes: maxUpload))
            .post("fx", use: load)
    }

    @Sendable func rates(_ request: Request, context: AppRequestContext) async throws -> FxRates {
        let parameters = request.uri.queryParameters
        let base = try Self.currency(parameters.get("base") ?? "EUR", "base")
        if parameters.get("date") == nil {
            let discontinued = try await store.discontinued()
            let now = try await quotes.fxRates(base: base, currencies: try await store.currencies().filter { $0 != base })
            guard !now.isEmpty else { throw FxError.noRate(base, "any currency") }
            return FxRates(
                base: base, date: history.clock.today(), rates: now.mapValues(\.rate.rate),
                asOf: now.filter { discontinued[$0.key] == nil }.values.map(\.asOf).min(), discontinued: discontinued
            )
        }
        let day = try Self.day(parameters.get("date"), history)
        let rates = try await store.rates(base: base, on: day)
        guard !rates.isEmpty else { throw FxError.noRate(base, "any currency") }
        return FxRates(
            base: base, date: rates.map(\.day).max() ?? day,
            rates: Dictionary(uniqueKeysWithValues: rates.map { ($0.currency, $0.rate.rate) }), asOf: nil,
            discontinued: try await store.discontinued(on: day)
        )
    }

    @Sendable func convert(_ request: Request, context: AppRequestContext) async throws -> FxConversion {
        let parameters = request.uri.queryParameters
        let from = try Self.currency(parameters.get("from") ?? "", "from")
        let to = try Self.currency(parameters.get("to") ?? "", "to")
        guard let text = parameters.get("amount"), let amount = Decimal(exactly: text), abs(amount) < 1_000_000_000_000 else {
            throw InvalidInput("amount must be a decimal number, like 100 or 12.50.")
        }
        let rate: Decimal, used: String, asOf: Date?
        if parameters.get("date") == nil {
            guard let now = try await quotes.fxRate(from: from, to: to) else { throw FxError.noRate(from, to) }
            (rate, used, asOf) = (now.rate, history.clock.today(), now.asOf)
        } else {
            let day = try Self.day(parameters.get("date"), history)
            guard let reference = try await store.rate(from: from, to: to, on: day) else { throw FxError.noRate(from, to) }
            (rate, used, asOf) = (reference.rate, reference.day, nil)
        }
        return FxConversion(
            from: from, to: to, amount: amount.moneyString, rate: rate.rate, result: (amount * rate).rounded(2).moneyString,
            date: used, asOf: asOf
        )
    }

    @Sendable func chart(_ request: Request, context: AppRequestContext) async throws -> FxChart {
        let pair = context.parameters.get("pair") ?? ""
        guard pair.count == 6 else { throw InvalidInput("The pair is two currency codes, like EURUSD.") }
        let from = try Self.currency(String(pair.prefix(3)), "pair")
        let to = try Self.currency(String(pair.suffix(3)), "pair")
        guard let months = Self.ranges[request.uri.queryParameters.get("range") ?? "1y"] else {
            throw InvalidInput("range must be one of \(Self.ranges.keys.sorted().joined(separator: ", ")).")
        }
        let last = history.clock.today()
        guard let end = history.date(last), let start = Calendar(identifier: .gregorian).date(byAdding: .month, value: -months, to: end) else {
            throw InvalidInput("range reaches too far back.")
        }
        let points = try await store.series(from: from, to: to, first: history.dayString(start), last: last)
        guard !points.isEmpty || from == to else { throw FxError.noRate(from, to) }
        return FxChart(pair: from + to, points: points.map { FxChart.Point(date: $0.day, rate: $0.rate.rate) })
    }

    /// The ECB's CSV; `{"rows": n}` stored.
    @Sendable func load(_ request: Request, context: AppRequestContext) async throws -> AdminController.Loaded {
        let body = try await request.body.collect(upTo: maxUpload)
        return AdminController.Loaded(rows: try await store.store(try FxStore.parse(String(buffer: body)), audit: context.actor().event(.adminFx)))
    }

    static func currency(_ text: String, _ name: String) throws -> String {
        let code = text.uppercased()
        guard FxCurrency.isCode(code) else { throw InvalidInput("\(name) must be a currency code, like USD or EUR.") }
        return code
    }

    /// A day (default today), in the market's time zone.
    static func day(_ text: String?, _ history: ValueHistoryService) throws -> String {
        guard let text else { return history.clock.today() }
        guard CalendarDay.isValid(text) else { throw InvalidInput("date must be a day, YYYY-MM-DD.") }
        return text
    }
}
