import Foundation
import Postgres

/// Writes instruments and admin quotes.
struct MarketAdminStore: Sendable {
    let pool: PostgresConnectionPool

    /// Whether no instrument exists yet.
    func isEmpty() async throws -> Bool {
        try await pool.query("SELECT NOT EXISTS (SELECT 1 FROM instruments)").decodeColumn(Bool.self) == [true]
    }

    /// Inserts or replaces instruments; returns how many were written.
    func upsert(_ instruments: [Instrument], audit: AuditEntry? = nil) async throws -> Int {
        guard !instruments.isEmpty else { return 0 }
        return try await pool.withTransaction { session in
            let written = try await session.execute(
            """
            INSERT INTO instruments (symbol, name, description, sector, currency)
            SELECT * FROM unnest(\(instruments.map(\.symbol)), \(instruments.map(\.name)),
                                 \(instruments.map(\.description)), \(instruments.map(\.sector)),
                                 \(instruments.map(\.currency)))
            ON CONFLICT (symbol) DO UPDATE SET
                name = excluded.name, description = excluded.description, sector = excluded.sector,
                currency = excluded.currency, active = true
            """
            )
            if var audit {
                audit.details["symbols"] = .texts(instruments.map(\.symbol))
                try await AuditStore.record(audit, in: session)
            }
            return written
        }
    }

    /// Sets the latest prices. The previous close is the last daily close before the
    /// quote's market day (in `zone`, `MarketClock.zone`) or, without history, the last
    /// quote of an earlier market day. Unknown symbols store nothing and are reported.
    func setQuotes(_ quotes: [PriceQuote], zone: String, audit: AuditEntry? = nil) async throws -> Int {
        guard !quotes.isEmpty else { return 0 }
        let symbols = quotes.map(\.symbol)
        let known = Set(try await pool.query("SELECT symbol FROM instruments WHERE symbol = ANY(\(symbols))").decodeColumn(String.self))
        if let unknown = symbols.first(where: { !known.contains($0) }) { throw MarketError.unknownSymbol(unknown) }
        return try await pool.withTransaction { session in
            let written = try await session.execute(
            """
            INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
            SELECT input.symbol, input.price,
                   (SELECT close FROM daily_bars d
                    WHERE d.symbol = input.symbol AND d.day < market_day(input.as_of, \(zone))
                    ORDER BY d.day DESC LIMIT 1),
                   input.as_of, 'admin'
            FROM unnest(\(symbols), \(quotes.map(\.price)), \(quotes.map(\.asOf))) AS input (symbol, price, as_of)
            ON CONFLICT (symbol) DO UPDATE SET
                price = excluded.price,
                previous_close = coalesce(
                    excluded.previous_close,
                    CASE WHEN market_day(q.as_of, \(zone)) < market_day(excluded.as_of, \(zone))
                         THEN q.price ELSE q.previous_close END),
                as_of = excluded.as_of,
                source = 'admin'
            """
            )
            if var audit {
                audit.details["symbols"] = .texts(symbols)
                try await AuditStore.record(audit, in: session)
            }
            return written
        }
    }

    /// Changes a user's personal cash by `amount`, recorded as an adjustment, in one
    /// statement; never below zero, nor below what open buy orders reserve.
    func adjustFunds(userID: Int, amount: Decimal, audit: AuditEntry) async throws -> Decimal {
        let cash = try await pool.withTransaction { session in
            let cash = try await session.query(
            """
            WITH personal AS (
                UPDATE portfolios SET cash = cash + \(amount)
                WHERE user_id = \(userID) AND kind = \(PortfolioKind.personal) AND buying_power(cash, reserved_cash) + \(amount) >= 0
                RETURNING id, cash
            ), movement AS (
                INSERT INTO cash_movements (portfolio_id, kind, amount, note)
                SELECT id, \(CashMovementKind.adjustment), \(amount), 'Adjusted by an admin' FROM personal
            )
            SELECT cash FROM personal
            """
            ).decodeColumn(Decimal.self).first
            if cash != nil { try await AuditStore.record(audit, in: session) }
            return cash
        }
        if let cash { return cash }
        let exists = try await pool.query("SELECT 1 FROM users WHERE id = \(userID)").count == 1
        throw exists ? InvalidInput("Cash would fall below zero, or below what open orders reserve.") : AdminError.noSuchUser
    }
}
