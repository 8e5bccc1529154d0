import Foundation
import Hummingbird

/// Seeding the market: instruments, quotes and daily price history. Admins only.
struct AdminController {
    let market: MarketAdminStore
    let prices: PriceImporter
    let notifications: NotificationStore
    /// Largest price upload accepted, in bytes, counted as it streams (`ADMIN_UPLOAD_MAX_MB`).
    let maxPriceUpload: Int
    let pricesStored: PricesStored
    /// The market's time zone (`MarketClock.zone`): which day a quote's previous close is of.
    let zone: String

    func addRoutes(to api: RouterGroup<AppRequestContext>) {
        let admin = api.group("admin").add(middleware: AdminOnlyMiddleware())
        admin.group().add(middleware: BodyLimitMiddleware(maxBytes: maxPriceUpload))
            .post("prices", use: postPrices)
        let json = admin.group().add(middleware: BodyLimitMiddleware())
        json.put("instruments", use: putInstruments)
        json.post("quotes", use: postQuotes)
        json.post("notifications", use: broadcast)
        json.post("users/{id}/funds", use: adjustFunds)
    }

    struct BroadcastRequest: Decodable {
        let title: String
        let body: String
    }

    struct FundsRequest: Decodable {
        let amount: DecimalInput
    }

    struct Funds: ResponseEncodable { let cash: String }

    /// A notification to every user.
    @Sendable func broadcast(_ request: Request, context: AppRequestContext) async throws -> EditedResponse<Notification> {
        let body = try await request.decodeJSON(as: BroadcastRequest.self, context: context)
        let title = body.title.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(title, field: "title", length: 1...200)
        try TextInput.check(body.body, field: "body", length: 0...2000, use: .shownWithLines)
        let notification = try await notifications.broadcast(title: title, body: body.body, audit: context.actor().event(.adminBroadcast))
        return EditedResponse(status: .created, response: notification)
    }

    /// Adds to (or, negative, takes from) a user's personal cash as an `adjustment` movement.
    @Sendable func adjustFunds(_ request: Request, context: AppRequestContext) async throws -> Funds {
        guard let userID = context.parameters.get("id").flatMap(Int.init) else { throw AdminError.noSuchUser }
        let amount = try await request.decodeJSON(as: FundsRequest.self, context: context).amount.value
        guard amount != 0, abs(amount) <= 1_000_000_000_000 else {
            throw InvalidInput("amount must be non-zero and at most 1000000000000 either way.")
        }
        let audit = try context.actor().event(.adminFunds, target: userID, ["amount": .amount(amount)])
        return Funds(cash: try await market.adjustFunds(userID: userID, amount: amount, audit: audit).moneyString)
    }

    struct InstrumentInput: Decodable {
        let symbol: String
        let name: String
        let description: String?
        let sector: String?
        let currency: String?
    }

    struct QuoteInput: Decodable {
        let symbol: String
        let price: DecimalInput
        let asOf: Date?
    }

    struct Upserted: ResponseEncodable { let upserted: Int }
    struct Accepted: ResponseEncodable { let accepted: Int }
    struct Loaded: ResponseEncodable { let rows: Int }

    /// Instruments as a JSON array, or as the CSV file `mockstock seed --instruments` reads
    /// (`Content-Type: text/csv`), whose errors name their line (the problem's `line`).
    @Sendable func putInstruments(_ request: Request, context: AppRequestContext) async throws -> Upserted {
        if request.headers[.contentType]?.lowercased().hasPrefix("text/csv") == true {
            let body = try await request.body.collect(upTo: context.maxUploadSize)
            return Upserted(upserted: try await market.upsert(try Instrument.fromCSV(String(buffer: body)), audit: context.actor().event(.adminInstrument)))
        }
        let inputs = try await request.decodeJSON(as: [InstrumentInput].self, context: context)
        let instruments = try inputs.enumerated().map { index, input in
            try Instrument(input, fieldPrefix: "[\(index)].")
        }
        guard Set(instruments.map(\.symbol)).count == instruments.count else {
            throw InvalidInput("Each symbol may appear once per request.")
        }
        return Upserted(upserted: try await market.upsert(instruments, audit: context.actor().event(.adminInstrument)))
    }

    @Sendable func postQuotes(_ request: Request, context: AppRequestContext) async throws -> Accepted {
        let inputs = try await request.decodeJSON(as: [QuoteInput].self, context: context)
        let latest = Date().addingTimeInterval(60)
        let quotes = try inputs.enumerated().map { index, input in
            let symbol = Symbol.normalize(input.symbol)
            guard Symbol.isValid(symbol) else { throw MarketError.unknownSymbol(symbol) }
            guard input.price.value > 0, input.price.value < 1_000_000_000_000 else {
                throw InvalidInput("[\(index)].price must be a positive amount.")
            }
            let asOf = input.asOf ?? Date()
            guard asOf <= latest else { throw InvalidInput("[\(index)].asOf is in the future.") }
            return PriceQuote(symbol: symbol, price: input.price.value, previousClose: nil, asOf: asOf)
        }
        guard Set(quotes.map(\.symbol)).count == quotes.count else {
            throw InvalidInput("Each symbol may appear once per request.")
        }
        let accepted = try await market.setQuotes(quotes, zone: zone, audit: context.actor().event(.adminQuotes))
        await pricesStored(quotes.map(\.symbol))
        return Accepted(accepted: accepted)
    }

    /// CSV daily bars, streamed into the database; see `PriceImporter`.
    @Sendable func postPrices(_ request: Request, context: AppRequestContext) async throws -> Loaded {
        Loaded(rows: try await prices.load(request.body, audit: context.actor().event(.adminPrices)))
    }
}

/// Lets only admins through; everyone else gets 403.
struct AdminOnlyMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard try context.requireIdentity().role == .admin else {
            throw AppError.forbidden("Only admins may do this.")
        }
        return try await next(request, context)
    }
}
