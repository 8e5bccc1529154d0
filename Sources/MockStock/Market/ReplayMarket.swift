import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// Relives stored history: from `startDay`, the market moves one trading day every
/// `1 / tradingDaysPerMinute` minutes, each instrument priced at that day's close with
/// the day before's close as its previous close. The replay's start time is kept in the
/// database, so every server process and restart is on the same day. Charts and yearly
/// figures stop at the replay day: players cannot see the future.
public final class ReplayMarket: Service, Sendable {
    public struct Settings: Sendable {
        /// First replayed day, `YYYY-MM-DD`.
        public var startDay = "2020-02-19"
        public var tradingDaysPerMinute = 1.0
        /// Seconds between checks for a new replay day.
        public var checkSeconds = 5

        public init() {}
    }

    let pool: PostgresConnectionPool
    let settings: Settings
    let logger: Logger
    let pricesStored: PricesStored
    /// The trading days from `startDay` on, and when the replay started; read once.
    private let calendar = Mutex<(days: [String], startedAt: Date)?>(nil)

    public init(pool: PostgresConnectionPool, settings: Settings, logger: Logger, pricesStored: @escaping PricesStored = { _ in }) {
        self.pool = pool
        self.settings = settings
        self.logger = logger
        self.pricesStored = pricesStored
    }

    public func run() async throws {
        await repeatUntilShutdown(every: .seconds(settings.checkSeconds), logger: logger, task: "replay tick") {
            try await self.tick(now: Date())
        }
    }

    /// The replayed day at `now`, or nil when there is no history from the start day on.
    func day(at now: Date) async throws -> String? {
        let (days, startedAt) = try await loadCalendar()
        guard !days.isEmpty else { return nil }
        let minutes = max(now.timeIntervalSince(startedAt), 0) / 60
        let index = min(Int(minutes * settings.tradingDaysPerMinute), days.count - 1)
        return days[index]
    }

    /// Prices every instrument at its close on the replay day (or its last close before),
    /// and every currency at that day's reference rate.
    func tick(now: Date) async throws {
        guard let day = try await day(at: now) else { return }
        let changed = try await pool.execute(
            """
            INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
            SELECT i.symbol, last.close,
                   -- The day before's close in today's shares (a split on the replay day divides it).
                   (SELECT p.close FROM adjusted_bars(
                        i.symbol, (SELECT max(d.day) FROM daily_bars d WHERE d.symbol = i.symbol AND d.day < last.day),
                        last.day, \(AdjustedHistory.split)) p
                    ORDER BY p.day LIMIT 1),
                   -- Stamped 20:00 UTC, after the close in New York.
                   market_day_start(last.day, 'UTC') + interval '20 hours', 'replay'
            FROM instruments i
            CROSS JOIN LATERAL (
                SELECT day, close FROM daily_bars d WHERE d.symbol = i.symbol AND d.day <= \(day)::date
                ORDER BY d.day DESC LIMIT 1
            ) last
            -- A scenario league's instruments keep the league's clock.
            WHERE i.league_id IS NULL
            ON CONFLICT (symbol) DO UPDATE SET
                price = excluded.price, previous_close = excluded.previous_close,
                as_of = excluded.as_of, source = 'replay'
            WHERE q.as_of IS DISTINCT FROM excluded.as_of OR q.source <> 'replay'
            """
        )
        guard changed > 0 else { return }
        // A new replay day: its reference rates are the rates now, for valuations in SQL too.
        try await pool.execute(
            """
            INSERT INTO fx_quotes AS q (currency, per_euro, as_of, source)
            SELECT currency, per_euro, as_of, 'replay'
            FROM fx_now(ARRAY(SELECT DISTINCT currency FROM fx_rates), \(day)::date, 'infinity')
            ON CONFLICT (currency) DO UPDATE SET per_euro = excluded.per_euro, as_of = excluded.as_of, source = 'replay'
            WHERE q.as_of IS DISTINCT FROM excluded.as_of OR q.source <> 'replay'
            """
        )
        await pricesStored(nil)
    }

    private func loadCalendar() async throws -> (days: [String], startedAt: Date) {
        if let calendar = calendar.withLock({ $0 }) { return calendar }
        // A replay starting from another day than the stored one starts afresh.
        let startedAt = try await pool.query(
            """
            INSERT INTO market_clock AS c (provider, started_at, day) VALUES ('replay', now(), \(settings.startDay)::date)
            ON CONFLICT (provider) DO UPDATE SET
                started_at = CASE WHEN c.day = excluded.day THEN c.started_at ELSE excluded.started_at END,
                day = excluded.day
            RETURNING started_at
            """
        ).decodeColumn(Date.self)[0]
        let days = try await pool.query(
            """
            SELECT to_char(day, 'YYYY-MM-DD') FROM (SELECT DISTINCT day FROM daily_bars WHERE day >= \(settings.startDay)::date) d
            ORDER BY day
            """
        ).decodeColumn(String.self)
        // Keep asking while there is no history yet (prices may be seeded after start-up).
        if !days.isEmpty { calendar.withLock { $0 = (days, startedAt) } }
        return (days, startedAt)
    }
}
