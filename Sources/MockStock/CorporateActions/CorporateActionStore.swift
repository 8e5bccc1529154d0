import Foundation
import Postgres

/// Splits and dividends: recorded from uploaded daily bars, entered by admins, listed.
struct CorporateActionStore: Sendable {
    let pool: PostgresConnectionPool

    /// Records the actions in the `price_upload` rows of a price import (in its
    /// transaction): each once, so loading the same file again adds nothing.
    static let recordFromUpload: PostgresQuery = """
        INSERT INTO corporate_actions (symbol, ex_date, kind, ratio, amount, source)
        SELECT symbol, day, 'split', split, NULL::numeric, 'prices' FROM price_upload WHERE split <> 1
        UNION ALL
        SELECT symbol, day, 'dividend', NULL::numeric, dividend, 'prices' FROM price_upload WHERE dividend > 0
        ORDER BY 1, 2
        ON CONFLICT ON CONSTRAINT corporate_actions_once DO NOTHING
        """

    private static let columns = "id, symbol, kind, to_char(ex_date, 'YYYY-MM-DD'), ratio, amount, source"

    private static func action(_ row: PostgresRow) throws -> CorporateAction {
        let (id, symbol, kind, exDate, ratio, amount, source) =
            try row.decode((Int, String, CorporateActionKind, String, Decimal?, Decimal?, String).self)
        return CorporateAction(id: id, symbol: symbol, kind: kind, exDate: exDate, ratio: ratio.map { "\($0)" },
                               amount: amount?.moneyString, source: source)
    }

    /// Records an admin's action; the symbol must be an instrument's.
    func add(_ action: NewCorporateAction, audit: AuditEntry) async throws -> CorporateAction {
        do {
            return try await pool.withTransaction { session in
            let rows = try await session.query(
                """
                INSERT INTO corporate_actions (symbol, ex_date, kind, ratio, amount, source)
                SELECT symbol, \(action.exDate)::date, \(action.kind), \(action.ratio)::numeric, \(action.amount)::numeric, 'admin'
                FROM instruments WHERE symbol = \(action.symbol)
                RETURNING \(unescaped: Self.columns)
                """
            )
            guard let row = rows.first else { throw MarketError.unknownSymbol(action.symbol) }
            let recorded = try Self.action(row)
            var audit = audit
            audit.details["corporateActionId"] = .number(recorded.id)
            audit.details["symbol"] = .text(action.symbol)
            try await AuditStore.record(audit, in: session)
            return recorded
            }
        } catch let error as PostgresError where error.code == .uniqueViolation && error.constraint == "corporate_actions_once" {
            throw CorporateActionError.alreadyRecorded
        }
    }

    /// A symbol's actions up to `through` (the last day players may see), newest first.
    func actions(symbol: String, through end: String?, limit: Int) async throws -> [CorporateAction] {
        try await pool.query(
            """
            SELECT \(unescaped: Self.columns) FROM corporate_actions
            WHERE symbol = \(symbol) AND (\(end)::date IS NULL OR ex_date <= \(end)::date)
            ORDER BY ex_date DESC, kind LIMIT \(limit)
            """
        ).map(Self.action)
    }
}
