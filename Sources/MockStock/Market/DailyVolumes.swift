import Foundation
import Postgres

/// Each symbol's volume on the previous trading day — the latest stored daily bar before
/// the market's day — which realistic fills measure an order against (`V` in
/// `TradingRules.pricing`). Remembered per symbol and market day for a minute: a past
/// day's bar changes only when history is loaded. A symbol without one (or with a volume
/// of 0) has no known volume.
final class DailyVolumes: Sendable {
    private let reads: StaleReads
    private let clock: MarketClock
    private let cache = ExpiringCache<String, Int>(lifetime: .seconds(60), capacity: 10_000)

    init(reads: StaleReads, clock: MarketClock) {
        self.reads = reads
        self.clock = clock
    }

    /// The symbol's volume on the trading day before the market's day, nil when unknown.
    func previousDay(_ symbol: String) async throws -> Int? {
        let day = try await clock.marketDay()
        let key = "\(day) \(symbol)"
        if let volume = cache.value(for: key) { return volume > 0 ? volume : nil }
        let volume = try await reads.query(
            "SELECT volume FROM daily_bars WHERE symbol = \(symbol) AND day < \(day)::date ORDER BY day DESC LIMIT 1"
        ).decodeColumn(Int.self).first ?? 0
        cache.store(volume, for: key)
        return volume > 0 ? volume : nil
    }
}
