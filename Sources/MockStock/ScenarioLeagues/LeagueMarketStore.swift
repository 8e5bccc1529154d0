import Foundation
import Postgres

/// Scenario leagues' markets (sql/migrations/0058_scenario_leagues.sql): made with their
/// league, moved on by `league_market_advance` (the one writer of their prices, from
/// `league_bars`), read by their members, and the events their hosts script.
struct LeagueMarketStore: Sendable {
    let pool: PostgresConnectionPool

    /// The column `LeagueStore` reads with every league: its market as JSON (null for the
    /// real market), the period's dates only once revealed (`league_ended`).
    static let leagueColumn = """
        (SELECT json_build_object('kind', m.kind, 'dayMinutes', m.day_minutes, 'blind', m.blind, 'day', m.day,
                                  'days', cardinality(m.real_days), 'ended', league_ended(leagues, now()),
                                  'from', CASE WHEN NOT m.blind OR league_ended(leagues, now()) THEN m.from_day END,
                                  'to', CASE WHEN NOT m.blind OR league_ended(leagues, now()) THEN m.to_day END)::text
         FROM league_markets m WHERE m.league_id = leagues.id) AS market
        """

    static func summary(_ row: PostgresRow) throws -> LeagueMarketSummary? {
        guard let json = try row.decode(String?.self, column: "market") else { return nil }
        return try JSONDecoder().decode(LeagueMarketSummary.self, from: Data(json.utf8))
    }

    /// The trading days of a window: every day from `from` to `to` with a stored close of
    /// an instrument of the real market, oldest first.
    func tradingDays(from: String, to: String) async throws -> [String] {
        try await pool.query(
            """
            SELECT DISTINCT d.day::text FROM daily_bars d JOIN instruments i ON i.symbol = d.symbol AND i.league_id IS NULL
            WHERE d.day BETWEEN \(from)::date AND \(to)::date ORDER BY 1
            """
        ).decodeColumn(String.self)
    }

    /// Makes league `leagueID`'s market, inside the transaction that creates the league:
    /// its window and calendars, an instrument of its own for each real one with a close
    /// on the window's first day (`S01@LEAGUE`, "Company 01", … in an order that says
    /// nothing of the real symbols when blind; the real symbol and name otherwise), and
    /// day 1's prices. Refused when no instrument has a close that day.
    static func open(
        leagueID: Int, spec: LeagueMarketSpec, realDays: [String], barDays: [String], in session: PostgresSession
    ) async throws {
        try await session.execute(
            """
            INSERT INTO league_markets (league_id, kind, from_day, to_day, day_minutes, blind, real_days, bar_days)
            VALUES (\(leagueID), 'replay', \(spec.from)::date, \(spec.to)::date, \(spec.dayMinutes.map(Int32.init)), \(spec.blind),
                    \(realDays)::date[], \(barDays)::date[])
            """
        )
        let made = try await session.execute(
            """
            WITH chosen AS (
                SELECT i.symbol, i.name, i.description, i.sector, i.currency, first.close AS first_close,
                       row_number() OVER (ORDER BY CASE WHEN \(spec.blind) THEN md5(\(leagueID)::text || ':' || i.symbol) ELSE i.symbol END) AS n,
                       count(*) OVER () AS total
                FROM instruments i
                CROSS JOIN LATERAL (
                    SELECT a.close FROM adjusted_bars(i.symbol, \(realDays[0])::date, \(realDays[realDays.count - 1])::date, 'split') a
                    WHERE a.day = \(realDays[0])::date
                ) first
                WHERE i.league_id IS NULL AND i.active
            ), named AS (
                SELECT c.*, lpad(c.n::text, greatest(2, length(c.total::text)), '0') AS number,
                       symbol_in_league(CASE WHEN \(spec.blind) THEN 'S' || lpad(c.n::text, greatest(2, length(c.total::text)), '0')
                                             ELSE c.symbol END, \(leagueID)) AS stored
                FROM chosen c
            ), made AS (
                INSERT INTO instruments (symbol, name, description, sector, currency, league_id)
                SELECT n.stored, CASE WHEN \(spec.blind) THEN 'Company ' || n.number ELSE n.name END,
                       CASE WHEN \(spec.blind) THEN '' ELSE n.description END, CASE WHEN \(spec.blind) THEN '' ELSE n.sector END,
                       n.currency, \(leagueID)
                FROM named n
                RETURNING symbol
            )
            INSERT INTO league_instruments (league_id, symbol, real_symbol, base)
            SELECT \(leagueID), n.stored, n.symbol, CASE WHEN \(spec.blind) THEN 100 / n.first_close ELSE 1 END
            FROM named n WHERE n.stored IN (SELECT symbol FROM made)
            """
        )
        guard made > 0 else {
            throw InvalidInput("market: no instrument has a stored close on \(realDays[0]), the window's first trading day.")
        }
        try await session.execute("SELECT league_market_advance(\(leagueID), 1)")
    }

    struct MarketRecord: Sendable {
        let kind: String
        let day: Int
        let days: Int
        let blind: Bool
        let ended: Bool
        let from: String
        let to: String
        let dayMinutes: Int?
        /// When the next day starts on the league's clock (`league_market_day_start`).
        let nextDayAt: Date?
        let marketReturn: Decimal?
    }

    struct InstrumentRecord: Sendable {
        let symbol: String
        let name: String
        let price: Decimal?
        let firstPrice: Decimal?
        /// Since day 1, in percent (`return_percent`).
        let change: Decimal?
        let realSymbol: String
        let realName: String
    }

    /// League `leagueID`'s market now, with its instruments (nil: it trades the real market):
    /// both read in one snapshot, so the day and the prices are of the same moment (an
    /// advance may commit between two statements).
    func market(leagueID: Int) async throws -> (MarketRecord, [InstrumentRecord])? {
        try await pool.withTransaction(.repeatableRead) { session in
            let instruments = try await session.query(
                """
                SELECT li.symbol, i.name, q.price, first.close, return_percent(q.price, first.close), li.real_symbol, r.name
                FROM league_instruments li
                JOIN league_markets m ON m.league_id = li.league_id
                JOIN instruments i ON i.symbol = li.symbol
                JOIN instruments r ON r.symbol = li.real_symbol
                LEFT JOIN quotes q ON q.symbol = li.symbol
                LEFT JOIN daily_bars first ON first.symbol = li.symbol AND first.day = m.bar_days[1]
                WHERE li.league_id = \(leagueID)
                ORDER BY li.symbol
                """
            ).decode((String, String, Decimal?, Decimal?, Decimal?, String, String).self).map {
                InstrumentRecord(symbol: $0.0, name: $0.1, price: $0.2, firstPrice: $0.3, change: $0.4, realSymbol: $0.5, realName: $0.6)
            }
            let found = try await session.query(
                """
                SELECT m.kind, m.day, cardinality(m.real_days), m.blind, league_ended(l, now()), m.from_day::text, m.to_day::text,
                       m.day_minutes,
                       CASE WHEN m.day < cardinality(m.real_days) AND NOT league_ended(l, now()) THEN league_market_day_start(m, l, m.day + 1) END,
                       (SELECT return_percent(avg(q.price / first.close), 1)
                        FROM league_instruments li
                        JOIN quotes q ON q.symbol = li.symbol
                        JOIN daily_bars first ON first.symbol = li.symbol AND first.day = m.bar_days[1]
                        WHERE li.league_id = m.league_id)
                FROM league_markets m JOIN leagues l ON l.id = m.league_id
                WHERE m.league_id = \(leagueID)
                """
            ).decode((String, Int, Int, Bool, Bool, String, String, Int?, Date?, Decimal?).self).first
            guard let found else { return nil }
            return (MarketRecord(kind: found.0, day: found.1, days: found.2, blind: found.3, ended: found.4, from: found.5, to: found.6,
                                 dayMinutes: found.7, nextDayAt: found.8, marketReturn: found.9), instruments)
        }
    }

    /// Moves the market on to league day `day` (`league_market_advance`): returns the day
    /// now and the league's instruments, whose new prices the caller announces.
    /// The host's advance is recorded in the audit log in the same transaction, when it
    /// moved the market (of two at once, the second finds it moved and records nothing).
    func advance(leagueID: Int, to day: Int, audit: AuditEntry?) async throws -> (day: Int, symbols: [String]) {
        try await pool.withTransaction { session in
            let before = try await session.query("SELECT day FROM league_markets WHERE league_id = \(leagueID) FOR UPDATE")
                .decodeColumn(Int.self).first
            guard let before else { throw LeagueMarketError.noMarket }
            let now = try await session.query("SELECT league_market_advance(\(leagueID), \(Int32(clamping: day)))")
                .decodeColumn(Int?.self).first ?? nil
            guard let now else { throw LeagueMarketError.noMarket }
            if let audit, now > before { try await AuditStore.record(audit, in: session) }
            let symbols = try await session.query("SELECT symbol FROM league_instruments WHERE league_id = \(leagueID) ORDER BY symbol")
                .decodeColumn(String.self)
            return (now, symbols)
        }
    }

    /// The scenario leagues whose clock has passed their market's day now: each with the
    /// day it has come to (`league_market_day`).
    func due(at moment: Date) async throws -> [(leagueID: Int, day: Int)] {
        try await pool.query(
            """
            SELECT m.league_id, d.day FROM league_markets m JOIN leagues l ON l.id = m.league_id
            CROSS JOIN LATERAL (SELECT league_market_day(m, l, \(moment)) AS day) d
            WHERE m.day_minutes IS NOT NULL AND m.day < cardinality(m.real_days) AND d.day > m.day
            """
        ).decode((Int, Int).self).map { (leagueID: $0.0, day: $0.1) }
    }

    // MARK: Scripted events

    /// Schedules an event, unless the league has reached its day: the market's row is
    /// locked for it, so an advance either sees the event or comes first (and it is
    /// refused). `symbols` are stored symbols of the league's instruments (nil: all).
    func schedule(
        leagueID: Int, day: Int, symbols: [String]?, changePercent: Decimal, headline: String, body: String?, audit: AuditEntry
    ) async throws -> ScenarioEventRecord? {
        try await pool.withTransaction { session in
            let row = try await session.query(
                """
                WITH market AS (
                    SELECT league_id FROM league_markets WHERE league_id = \(leagueID) AND day < \(Int32(clamping: day)) FOR UPDATE
                )
                INSERT INTO league_events (league_id, day, symbols, change_percent, headline, body)
                SELECT league_id, \(Int32(clamping: day)), \(symbols)::text[], \(changePercent), \(headline), \(body) FROM market
                RETURNING \(unescaped: Self.eventColumns)
                """
            ).first
            guard let row else { return nil }
            let event = try Self.event(row)
            var audit = audit
            audit.details["eventId"] = .number(event.id)
            try await AuditStore.record(audit, in: session)
            return event
        }
    }

    /// The league's events by day (`appliedOnly`: those its market has reached).
    func events(leagueID: Int, appliedOnly: Bool) async throws -> [ScenarioEventRecord] {
        try await pool.query(
            """
            SELECT \(unescaped: Self.eventColumns) FROM league_events
            WHERE league_id = \(leagueID) AND (applied_at IS NOT NULL OR NOT \(appliedOnly))
            ORDER BY day, id
            """
        ).map(Self.event)
    }

    /// Which of `symbols` (stored) are the league's instruments.
    func instruments(leagueID: Int, among symbols: [String]) async throws -> Set<String> {
        Set(try await pool.query(
            "SELECT symbol FROM league_instruments WHERE league_id = \(leagueID) AND symbol = ANY(\(symbols)::text[])"
        ).decodeColumn(String.self))
    }

    struct ScenarioEventRecord: Sendable {
        let id: Int
        let day: Int
        let symbols: [String]?
        let changePercent: Decimal
        let headline: String
        let body: String?
        let applied: Bool
    }

    private static let eventColumns = "id, day, array_to_string(symbols, ','), change_percent, headline, body, applied_at IS NOT NULL"

    private static func event(_ row: PostgresRow) throws -> ScenarioEventRecord {
        let (id, day, symbols, change, headline, body, applied) = try row.decode((Int, Int, String?, Decimal, String, String?, Bool).self)
        return ScenarioEventRecord(id: id, day: day, symbols: symbols.map { $0.split(separator: ",").map(String.init) },
                                   changePercent: change, headline: headline, body: body, applied: applied)
    }
}
