import Foundation
import Postgres

/// The volumes realistic fills measure an order against: each symbol's volume on the
/// previous trading day — the latest stored daily bar before the market's day — (`V` in
/// `TradingRules.pricing` and `TradingRules.volumeCap`), and what a capped portfolio has
/// filled of a symbol on the market's day (`volume_fills`, counted by the fill statement).
/// V is remembered per symbol and market day for a minute: a past day's bar changes only
/// when history is loaded. A symbol without one (or with a volume of 0) has no known volume.
final class DailyVolumes: Sendable {
    private let pool: PostgresConnectionPool
    private let reads: StaleReads
    private let clock: MarketClock
    private let cache = ExpiringCache<String, Int>(lifetime: .seconds(60), capacity: 10_000)

    init(pool: PostgresConnectionPool, reads: StaleReads, clock: MarketClock) {
        self.pool = pool
        self.reads = reads
        self.clock = clock
    }

    /// The day a cap counts the symbol's fills under (`YYYY-MM-DD`): the market's day now;
    /// for a scenario league's instrument, the league's day (the date of its bar).
    func marketDay(for symbol: String) async throws -> String {
        guard Symbol.isLeagues(symbol) else { return try await clock.marketDay() }
        return try await leagueDay(symbol).day
    }

    /// The symbol's volume on the trading day before the market's day, nil when unknown;
    /// for a scenario league's instrument, on the league's day before (read afresh: a
    /// league's day may pass at any moment).
    func previousDay(_ symbol: String) async throws -> Int? {
        if Symbol.isLeagues(symbol) { return try await leagueDay(symbol).volume.flatMap { $0 > 0 ? $0 : nil } }
        let day = try await clock.marketDay()
        let key = "\(day) \(symbol)"
        if let volume = cache.value(for: key) { return volume > 0 ? volume : nil }
        let volume = try await reads.query(
            "SELECT volume FROM daily_bars WHERE symbol = \(symbol) AND day < \(day)::date ORDER BY day DESC LIMIT 1"
        ).decodeColumn(Int.self).first ?? 0
        cache.store(volume, for: key)
        return volume > 0 ? volume : nil
    }

    /// A scenario league's instrument: the date of the league's day now, and the volume of
    /// the day before's bar.
    private func leagueDay(_ symbol: String) async throws -> (day: String, volume: Int?) {
        let found = try await pool.query(
            """
            SELECT m.bar_days[m.day]::text,
                   (SELECT b.volume FROM daily_bars b WHERE b.symbol = li.symbol AND b.day = m.bar_days[m.day - 1])
            FROM league_instruments li JOIN league_markets m ON m.league_id = li.league_id
            WHERE li.symbol = \(symbol)
            """
        ).decode((String, Int?).self).first
        guard let found else { throw MarketError.unknownSymbol(symbol) }
        return (found.0, found.1)
    }

    /// The shares the portfolio's fills in the symbol total on `day` under a cap (read from
    /// the primary: the fill just before counts).
    func filled(portfolioID: Int, symbol: String, day: String) async throws -> Int {
        try await Self.filled(portfolioID: portfolioID, symbol: symbol, day: day, run: pool.query)
    }

    static func filled(
        portfolioID: Int, symbol: String, day: String, run: (PostgresQuery) async throws -> PostgresRows
    ) async throws -> Int {
        try await run("SELECT quantity FROM volume_fills WHERE portfolio_id = \(portfolioID) AND symbol = \(symbol) AND day = \(day)::date")
            .decodeColumn(Int.self).first ?? 0
    }
}
