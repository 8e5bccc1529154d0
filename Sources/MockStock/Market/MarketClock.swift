import Foundation

/// Which day it is for the market: the one owner of "which trading day a moment belongs
/// to" (its calendar day in the market's time zone, `MarketHours.timeZone`: New York for
/// `nyse`, UTC for `always`) and of "the market's day now" (the replayed day when the
/// server replays history, else today). Built once and handed to every feature that
/// needs a day; SQL statements are given the day as a parameter and never read
/// `current_date`, whose day is the database session's.
public struct MarketClock: Sendable {
    public let hours: MarketHours
    public let now: @Sendable () -> Date
    private let replayDay: @Sendable () async throws -> String?

    /// `replayDay` answers the replayed day while the server replays history, else nil.
    public init(
        hours: MarketHours, now: @escaping @Sendable () -> Date,
        replayDay: @escaping @Sendable () async throws -> String? = { nil }
    ) {
        self.hours = hours
        self.now = now
        self.replayDay = replayDay
    }

    /// The market's time zone, as SQL's `market_day` and `market_day_start` take it: the
    /// one setting every statement that turns a moment into a market day is given.
    public var zone: String { hours.zone }

    /// The market's day (`YYYY-MM-DD`) of a moment.
    public func day(of moment: Date) -> String { hours.day(of: moment) }

    /// Today in the market's time zone.
    public func today() -> String { day(of: now()) }

    /// The day the market plays: the replayed day when replaying history, else today.
    /// Splits and dividends fall due by it, and back-dated trades must come before it.
    public func marketDay() async throws -> String { try await replayDay() ?? today() }
}
