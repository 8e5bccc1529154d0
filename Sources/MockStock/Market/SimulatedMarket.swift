import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Synchronization

/// A living market: every tick, each price takes one step of a random walk whose
/// volatility is the symbol's real daily volatility (over its last year of history),
/// pulled gently back towards its last real close so prices stay plausible for ever.
/// Prices live in the `quotes` table (exchange rates, walked alike, in `fx_quotes`), so
/// every server process and every restart sees the same market; a row lock on the market clock lets one process take each tick.
///
/// The walk itself uses floating point (it is a simulation); every price it produces is
/// rounded to the cent and stored as an exact decimal.
public final class SimulatedMarket: Service, Sendable {
    public struct Settings: Sendable {
        /// Time between ticks (`SIMULATION_TICK_SECONDS`).
        public var tickInterval: Duration = .seconds(5)
        /// Trading minutes one tick stands for; 1 gives realistic intraday moves.
        public var minutesPerTick = 1.0
        /// Seeds the random walk: the same seed, ticks and starting prices give the same prices.
        public var seed: UInt64 = 0

        public init() {}
    }

    /// A symbol's anchor (last real close) and daily volatility, from its history.
    struct History: Sendable {
        let anchor: Decimal
        let volatility: Double
    }

    let pool: PostgresConnectionPool
    let settings: Settings
    /// Whose day a tick belongs to: a new day's first tick makes the prices its previous closes.
    let hours: MarketHours
    let logger: Logger
    let pricesStored: PricesStored
    /// History statistics of stocks (by symbol) and exchange rates (by currency, units per
    /// euro), read at the first tick and refreshed every ten minutes.
    private let history = Mutex<(read: ContinuousClock.Instant, bySymbol: [String: History], byCurrency: [String: History])?>(nil)

    public init(
        pool: PostgresConnectionPool, settings: Settings, hours: MarketHours, logger: Logger,
        pricesStored: @escaping PricesStored = { _ in }
    ) {
        self.pool = pool
        self.settings = settings
        self.hours = hours
        self.logger = logger
        self.pricesStored = pricesStored
    }

    public func run() async throws {
        await repeatUntilShutdown(every: settings.tickInterval, logger: logger, task: "simulated market tick") {
            try await self.tick(now: Date())
        }
    }

    /// The tick number for a moment: ticks are counted from the Unix epoch.
    func tickNumber(at date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970) / max(settings.tickInterval.components.seconds, 1)
    }

    /// Moves every price one step if no process has done so for this tick yet. Returns
    /// whether this call did the work.
    @discardableResult
    func tick(now: Date) async throws -> Bool {
        let tick = tickNumber(at: now)
        let (history, currencies) = try await historyStatistics()
        let moved = try await pool.withTransaction { session in
            try await session.execute(
                "INSERT INTO market_clock (provider, tick) VALUES ('simulated', 0) ON CONFLICT DO NOTHING"
            )
            let (lastTick, lastDay) = try await session.query(
                "SELECT tick, to_char(day, 'YYYY-MM-DD') FROM market_clock WHERE provider = 'simulated' FOR UPDATE"
            )[0].decode((Int64, String?).self)
            guard tick > lastTick else { return false }
            let today = hours.day(of: now)
            let newDay = lastDay != today
            if newDay, let lastDay { try await Self.closeDay(lastDay, zone: hours.zone, in: session) }
            let rows = try await session.query(
                """
                SELECT i.symbol, q.price, q.previous_close FROM instruments i
                LEFT JOIN quotes q ON q.symbol = i.symbol
                WHERE i.active AND i.league_id IS NULL
                """
            )
            var symbols: [String] = []
            var prices: [Decimal] = []
            var previousCloses: [Decimal] = []
            for row in rows {
                let (symbol, price, previous) = try row.decode((String, Decimal?, Decimal?).self)
                // Instruments without history walk around their first price, at a typical 2% a day.
                guard let anchor = history[symbol]?.anchor ?? price else { continue }
                let volatility = history[symbol]?.volatility ?? 0.02
                let current = price ?? anchor
                var random = SeededRandom(seed: settings.seed, tick: tick, symbol: symbol)
                symbols.append(symbol)
                prices.append(RandomWalk.step(
                    price: current, anchor: anchor, dailyVolatility: volatility,
                    minutes: settings.minutesPerTick, normal: random.nextNormal()
                ))
                // A new day's previous close is where the last day ended; the first one is the real close.
                previousCloses.append(price == nil ? anchor : (newDay ? current : previous ?? anchor))
            }
            try await session.execute(
                """
                INSERT INTO quotes AS q (symbol, price, previous_close, as_of, source)
                SELECT symbol, price, previous_close, \(now), 'simulated'
                FROM unnest(\(symbols), \(prices), \(previousCloses)) AS input (symbol, price, previous_close)
                ON CONFLICT (symbol) DO UPDATE SET
                    price = excluded.price, previous_close = excluded.previous_close,
                    as_of = excluded.as_of, source = 'simulated'
                """
            )
            try await walkExchangeRates(currencies, tick: tick, now: now, in: session)
            try await session.execute(
                "UPDATE market_clock SET tick = \(tick), day = \(today)::date WHERE provider = 'simulated'"
            )
            return true
        }
        if moved { await pricesStored(nil) }
        return moved
    }

    /// A simulated day that ended becomes history: each simulated price's last value is
    /// the day's close in `daily_bars` (its open, high and low from the day's minute bars),
    /// so charts, returns and back-dated trades go on to yesterday. Run by the tick that
    /// starts the next day, under the market clock's lock: once, whichever process ticks.
    /// A day the history already reaches (a real close) is left as it is.
    static func closeDay(_ day: String, zone: String, in session: PostgresSession) async throws {
        try await session.execute(
            """
            INSERT INTO daily_bars (symbol, day, open, high, low, close)
            SELECT q.symbol, \(day)::date, m.open, greatest(m.high, q.price), least(m.low, q.price), q.price
            FROM quotes q
            LEFT JOIN LATERAL (
                SELECT (array_agg(b.open ORDER BY b.minute))[1] AS open, max(b.high) AS high, min(b.low) AS low
                FROM minute_bars b
                WHERE b.symbol = q.symbol
                  AND b.minute >= market_day_start(\(day)::date, \(zone))
                  AND b.minute < market_day_start(\(day)::date + 1, \(zone))
            ) m ON true
            WHERE q.source = 'simulated'
              AND NOT EXISTS (SELECT 1 FROM daily_bars d WHERE d.symbol = q.symbol AND d.day >= \(day)::date)
            """
        )
    }

    /// Exchange rates walk like prices (`fx_quotes`, units per euro to six decimals), each
    /// around its latest ECB reference rate with its real daily volatility.
    private func walkExchangeRates(_ currencies: [String: History], tick: Int64, now: Date, in session: PostgresSession) async throws {
        guard !currencies.isEmpty else { return }
        let last = try await session.query("SELECT currency, per_euro FROM fx_quotes").decode((String, Decimal).self)
        let current = Dictionary(last.map { ($0.0, $0.1) }) { first, _ in first }
        var walked: [String: FxQuote] = [:]
        for (currency, statistics) in currencies {
            var random = SeededRandom(seed: settings.seed, tick: tick, symbol: "EUR" + currency)
            walked[currency] = FxQuote(rate: RandomWalk.step(
                price: current[currency] ?? statistics.anchor, anchor: statistics.anchor, dailyVolatility: statistics.volatility,
                minutes: settings.minutesPerTick, normal: random.nextNormal(), decimals: 6
            ), asOf: now)
        }
        try await FxStore.save(walked, source: "simulated", in: session)
    }

    private func historyStatistics() async throws -> (bySymbol: [String: History], byCurrency: [String: History]) {
        if let cached = history.withLock({ $0 }), ContinuousClock.now - cached.read < .seconds(600) {
            return (cached.bySymbol, cached.byCurrency)
        }
        // Per symbol: its last year (253 closes) of split-adjusted history, so a split is
        // not a crash that makes the walk wild.
        let rows = try await pool.query(
            """
            SELECT i.symbol, s.last_close, coalesce(s.volatility, 0.02)
            FROM instruments i
            CROSS JOIN LATERAL (
                SELECT (array_agg(close ORDER BY day DESC))[1] AS last_close,
                       stddev_samp(ln(close / previous)) AS volatility
                FROM (
                    SELECT day, close, lag(close) OVER (ORDER BY day) AS previous
                    FROM (
                        SELECT a.day, a.close
                        FROM adjusted_bars(i.symbol, (SELECT max(day) - 400 FROM daily_bars d WHERE d.symbol = i.symbol),
                                           NULL, \(AdjustedHistory.split)) a
                        ORDER BY a.day DESC LIMIT 253
                    ) recent
                ) returns
            ) s
            WHERE s.last_close IS NOT NULL
            """
        )
        var bySymbol: [String: History] = [:]
        for row in rows {
            let (symbol, anchor, volatility) = try row.decode((String, Decimal, Double).self)
            bySymbol[symbol] = History(anchor: anchor, volatility: volatility)
        }
        // Per currency: its last year (260 reference rates) of daily changes.
        let rates = try await pool.query(
            """
            SELECT currency, (array_agg(per_euro ORDER BY day DESC))[1], coalesce(stddev_samp(ln(per_euro / previous)), 0.005)
            FROM (SELECT currency, day, per_euro, lag(per_euro) OVER (PARTITION BY currency ORDER BY day) AS previous,
                         row_number() OVER (PARTITION BY currency ORDER BY day DESC) AS age
                  FROM fx_rates) recent
            WHERE age <= 260
            GROUP BY currency
            """
        )
        var byCurrency: [String: History] = [:]
        for row in rates {
            let (currency, anchor, volatility) = try row.decode((String, Decimal, Double).self)
            byCurrency[currency] = History(anchor: anchor, volatility: volatility)
        }
        history.withLock { $0 = (.now, bySymbol, byCurrency) }
        return (bySymbol, byCurrency)
    }

}

/// One step of the walk, in log space: an Ornstein–Uhlenbeck process whose noise is the
/// daily volatility scaled to the step (a trading day has 390 minutes) and whose pull
/// back to the anchor halves any gap in about one simulated day.
enum RandomWalk {
    static let minutesPerDay = 390.0

    /// The next price, rounded to `decimals` places (cents by default).
    static func step(price: Decimal, anchor: Decimal, dailyVolatility: Double, minutes: Double, normal: Double, decimals: Int = 2) -> Decimal {
        let x = log(NSDecimalNumber(decimal: price).doubleValue)
        let mean = log(NSDecimalNumber(decimal: anchor).doubleValue)
        let fraction = minutes / minutesPerDay
        let pull = 1 - pow(0.5, fraction)
        let sigma = min(max(dailyVolatility, 0.001), 0.2) * sqrt(fraction)
        let next = exp(x + pull * (mean - x) + sigma * normal)
        let scale = pow(10.0, Double(decimals))
        let units = max((next * scale).rounded(), 1)
        return Decimal(Int64(units)) / pow(Decimal(10), decimals)
    }
}

/// SplitMix64 seeded by (seed, tick, symbol): reproducible, and the same in every process.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64, tick: Int64, symbol: String) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in symbol.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        state = seed &* 0x9e37_79b9_7f4a_7c15 ^ UInt64(bitPattern: tick) &* 0xbf58_476d_1ce4_e5b9 ^ hash
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A standard normal sample (Box–Muller).
    mutating func nextNormal() -> Double {
        let u1 = (Double(next() >> 11) + 0.5) / Double(1 << 53)
        let u2 = Double(next() >> 11) / Double(1 << 53)
        return sqrt(-2 * log(u1)) * cos(2 * .pi * u2)
    }
}
