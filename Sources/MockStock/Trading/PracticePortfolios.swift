import Foundation
import Hummingbird
import Postgres

/// `POST /api/portfolios` and `PATCH /api/portfolios/{id}` as sent.
struct PracticePortfolioRequest: Decodable, Sendable {
    let name: String?
    let startingCash: DecimalInput?
    let currency: String?
    /// The day the portfolio starts (its starting cash is dated then), for replaying the
    /// past: a day the price history covers; default its first day, so any day with
    /// prices can be traded back-dated.
    let startedAt: String?
}

/// `POST /api/portfolios/{id}/cash`: a deposit (positive) or a withdrawal (negative).
struct CashRequest: Decodable, Sendable {
    let amount: DecimalInput
    let at: String?
}

/// Practice portfolios: a user's own portfolios besides the personal one, never ranked,
/// earning no achievements (see `sql/functions/achievement_progress.sql`), each with a chosen
/// starting cash, base currency and start day. Cash moves in and out by deposits and
/// withdrawals, in date order.
struct PracticePortfolios: Sendable {
    let pool: PostgresConnectionPool
    let trading: TradingService
    let market: MarketStore
    let backdating: BackdatedTrades
    let clock: MarketClock
    let startingCash: Decimal

    static let maximum = 10
    /// The largest trade file an import reads (10,000 trades fit easily).
    static let maximumImport = 2 * 1024 * 1024
    static let earliestDay = "1990-01-01"

    func create(userID: Int, _ request: PracticePortfolioRequest) async throws -> PortfolioSummary {
        let name = try Self.name(request.name ?? "")
        let cash = try request.startingCash.map { try Self.amount($0.value, "startingCash", positive: true) } ?? startingCash
        let currency = try Self.currency(request.currency)
        let started = try await startDay(request.startedAt)
        let id: Int? = try await pool.withTransaction { session in
            // The user's row is the lock that keeps two creations from passing the limit together.
            let count = try await session.query(
                """
                SELECT (SELECT count(*) FROM portfolios WHERE user_id = u.id AND kind = \(PortfolioKind.practice))
                FROM users u WHERE u.id = \(userID) FOR UPDATE
                """
            ).decodeColumn(Int.self).first ?? 0
            guard count < Self.maximum else { return nil }
            return try await session.query(
                """
                WITH created AS (
                    INSERT INTO portfolios (user_id, name, cash, kind, base_currency, created_at)
                    VALUES (\(userID), \(name), \(cash), \(PortfolioKind.practice), \(currency),
                            coalesce(market_day_start(\(started)::date, \(clock.zone)), now()))
                    RETURNING id, created_at
                ), funded AS (
                    INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
                    SELECT id, \(CashMovementKind.startingCash), \(cash), 'Starting cash', created_at FROM created
                )
                SELECT id FROM created
                """
            ).decodeColumn(Int.self).first
        }
        guard let id else { throw TradingError.tooManyPortfolios(Self.maximum) }
        return try await summary(userID: userID, id: id)
    }

    /// Renames a practice portfolio, or changes its base currency.
    func update(userID: Int, id: Int, _ request: PracticePortfolioRequest) async throws -> PortfolioSummary {
        if request.startingCash != nil || request.startedAt != nil {
            throw InvalidInput("Only name and currency change; starting cash and start day are the portfolio's history.")
        }
        let name = try request.name.map(Self.name)
        let currency = try request.currency.map { try Self.currency($0) }
        let changed = try await pool.execute(
            """
            UPDATE portfolios SET name = coalesce(\(name)::text, name), base_currency = coalesce(\(currency)::text, base_currency)
            WHERE id = \(id) AND user_id = \(userID) AND kind = \(PortfolioKind.practice)
            """
        )
        guard changed == 1 else { throw TradingError.noSuchPortfolio }
        return try await summary(userID: userID, id: id)
    }

    /// Deletes a practice portfolio with its history (trades, orders, cash movements, keys).
    func delete(userID: Int, id: Int) async throws {
        guard try await pool.execute("DELETE FROM portfolios WHERE id = \(id) AND user_id = \(userID) AND kind = \(PortfolioKind.practice)") == 1 else {
            throw TradingError.noSuchPortfolio
        }
    }

    /// A deposit or withdrawal in a practice portfolio, dated `at` (default now): not on a
    /// day before its latest entry (`latest_entry`), and a withdrawal only of cash free now
    /// and not received after `at` (`income_after`).
    func move(userID: Int, id: Int, _ request: CashRequest) async throws -> CashMovement {
        let amount = try Self.amount(request.amount.value, "amount", positive: false)
        guard amount != 0 else { throw InvalidInput("amount must not be zero: positive deposits, negative withdraws.") }
        let at = try await day(request.at, "at")
        let kind: CashMovementKind = amount > 0 ? .deposit : .withdrawal
        let zone = clock.zone
        let rows = try await pool.query(
            """
            WITH target AS (
                SELECT p.id, coalesce(market_day_start(\(at)::date, \(zone)), now()) AS at, latest_entry(p.id) AS latest
                FROM portfolios p WHERE p.id = \(id) AND p.user_id = \(userID) AND p.kind = \(PortfolioKind.practice)
                FOR UPDATE OF p
            ), moved AS (
                UPDATE portfolios p SET cash = p.cash + \(amount)
                FROM target t
                WHERE p.id = t.id AND market_day(t.at, \(zone)) >= market_day(t.latest, \(zone))
                  AND (\(amount) > 0 OR buying_power(p.cash, p.reserved_cash) - income_after(p.id, t.at) + \(amount) >= 0)
                RETURNING p.id, t.at
            ), recorded AS (
                INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
                SELECT id, \(kind), \(amount), \(kind == .deposit ? "Deposit" : "Withdrawal"), at FROM moved
                RETURNING id, portfolio_id, kind, amount, note, created_at
            )
            SELECT (SELECT count(*) FROM target)::int,
                   (SELECT market_day(at, \(zone)) >= market_day(latest, \(zone)) FROM target),
                   r.id, r.kind, r.amount, r.note, r.created_at
            FROM (SELECT 1) one LEFT JOIN recorded r ON true
            """
        ).decode((Int, Bool?, Int?, CashMovementKind?, Decimal?, String?, Date?).self)
        guard let row = rows.first, row.0 == 1 else { throw TradingError.noSuchPortfolio }
        guard row.1 == true else { throw TradingError.outOfOrder }
        guard let movementID = row.2, let kind = row.3, let amount = row.4, let note = row.5, let created = row.6 else {
            throw TradingError.insufficientCashToWithdraw
        }
        return CashMovement(id: movementID, portfolioId: id, kind: kind, amount: amount.moneyString, note: note, createdAt: created)
    }

    /// The columns of the trade file players export (and, later, import): one trade a line,
    /// oldest first, the day in the market's time zone.
    static let csvHeader = "date,symbol,side,quantity,price,fee"

    /// Any of the user's portfolios' trades as CSV (`csvHeader`).
    func export(userID: Int, id: Int) async throws -> String {
        guard try await trading.store.portfolio(userID: userID, id: id) != nil else { throw TradingError.noSuchPortfolio }
        let rows = try await pool.query(
            """
            SELECT market_day(t.created_at, \(clock.zone))::text, t.symbol, t.side, t.quantity, t.price, t.fee
            FROM trades t WHERE t.portfolio_id = \(id)
            ORDER BY t.created_at, t.id
            """
        ).decode((String, String, String, Int, Decimal, Decimal).self)
        return ([Self.csvHeader] + rows.map { "\($0.0),\($0.1),\($0.2),\($0.3),\($0.4),\($0.5)" }).joined(separator: "\n") + "\n"
    }

    private func summary(userID: Int, id: Int) async throws -> PortfolioSummary {
        PortfolioSummary(try await trading.portfolio(userID: userID, id: id))
    }

    // MARK: Checks

    private static func name(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        try TextInput.check(name, field: "name", length: 1...100)
        return name
    }

    private static func amount(_ value: Decimal, _ field: String, positive: Bool) throws -> Decimal {
        guard value.rounded(2) == value, abs(value) <= 1_000_000_000, !positive || value > 0 else {
            throw InvalidInput("\(field) must be \(positive ? "above 0 and " : "")at most 1000000000 in absolute value, in cents.")
        }
        return value
    }

    private static func currency(_ text: String?) throws -> String {
        guard let text else { return ValueHistoryService.currency }
        return try FxController.currency(text, "currency")
    }

    /// A day from `earliestDay` to the market's day, when one is given.
    /// A practice portfolio's first day: one the price history covers (up to the market's
    /// day); without one, the history's first day. Where there is no history, today.
    private func startDay(_ text: String?) async throws -> String? {
        guard let span = try await market.historySpan(through: try await clock.marketDay()) else {
            return try await day(text, "startedAt")
        }
        guard let text else { return span.from }
        guard CalendarDay.isValid(text), text >= span.from, text <= span.through else {
            throw InvalidInput("startedAt must be a day with prices, from \(span.from) to \(span.through) (YYYY-MM-DD).")
        }
        return text
    }

    private func day(_ text: String?, _ field: String) async throws -> String? {
        guard let text else { return nil }
        guard CalendarDay.isValid(text), text >= Self.earliestDay, text <= (try await clock.marketDay()) else {
            throw InvalidInput("\(field) must be a day (YYYY-MM-DD) from \(Self.earliestDay) to today.")
        }
        return text
    }
}

extension CashMovement: ResponseEncodable {}

/// `POST /api/portfolios/{id}/import` answers how many trades it made.
struct TradesImported: ResponseEncodable {
    let imported: Int
}

extension TradingController {
    func addPracticeRoutes(to api: RouterGroup<AppRequestContext>, practice: PracticePortfolios) {
        api.post("portfolios") { request, context -> EditedResponse<PortfolioSummary> in
            let body = try await request.decodeJSON(as: PracticePortfolioRequest.self, context: context)
            return EditedResponse(status: .created, response: try await practice.create(userID: context.requireIdentity().userID, body))
        }
        api.patch("portfolios/{id}") { request, context -> PortfolioSummary in
            let body = try await request.decodeJSON(as: PracticePortfolioRequest.self, context: context)
            return try await practice.update(userID: context.requireIdentity().userID, id: try Self.portfolioID(context), body)
        }
        api.delete("portfolios/{id}") { _, context -> HTTPResponse.Status in
            try await practice.delete(userID: context.requireIdentity().userID, id: try Self.portfolioID(context))
            return .noContent
        }
        api.get("portfolios/{id}/export") { _, context -> Response in
            let id = try Self.portfolioID(context)
            let csv = try await practice.export(userID: context.requireIdentity().userID, id: id)
            return Response(
                status: .ok,
                headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"portfolio-\(id)-trades.csv\""],
                body: .init(byteBuffer: ByteBuffer(string: csv))
            )
        }
        api.post("portfolios/{id}/import") { request, context -> TradesImported in
            let body = try await request.body.collect(upTo: PracticePortfolios.maximumImport)
            let text = String(buffer: body)
            let portfolioID = try Self.portfolioID(context)
            let key = request.headers[.idempotencyKey]
            if let key { try TextInput.check(key, field: "Idempotency-Key", length: 1...255, use: .privateToSender) }
            let imported = try await practice.backdating.importTrades(
                csv: text, userID: context.requireIdentity().userID, portfolioID: portfolioID,
                idempotency: key.map { (key: $0, requestHash: "import\n\(portfolioID)\n\(text)".sha256Hex) }
            )
            return TradesImported(imported: imported)
        }
        api.post("portfolios/{id}/cash") { request, context -> EditedResponse<CashMovement> in
            let body = try await request.decodeJSON(as: CashRequest.self, context: context)
            let movement = try await practice.move(userID: context.requireIdentity().userID, id: try Self.portfolioID(context), body)
            return EditedResponse(status: .created, response: movement)
        }
    }

    private static func portfolioID(_ context: AppRequestContext) throws -> Int {
        guard let id = context.parameters.get("id").flatMap(Int.init), id > 0 else { throw TradingError.noSuchPortfolio }
        return id
    }
}
