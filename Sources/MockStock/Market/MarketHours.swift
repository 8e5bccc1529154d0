import Foundation

/// When the market trades (`MARKET_HOURS`). Orders that wait for the open, and `day`
/// orders that expire at the close, ask this one owner.
///
/// - `always`: the market never closes. Sessions are UTC days, so a `day` order lives
///   until the next midnight UTC, which is also the clock's `nextOpen` and `nextClose`.
/// - `nyse`: 09:30–16:00 America/New_York on weekdays, except the exchange's holidays;
///   13:00 closes on July 3 (Monday–Thursday), the day after Thanksgiving and
///   December 24 (Monday–Thursday). Holidays are computed from their rules for any year.
public struct MarketHours: Sendable, Equatable {
    public enum Schedule: String, Sendable, CaseIterable {
        case always, nyse
    }

    public let schedule: Schedule

    public init(schedule: Schedule) {
        self.schedule = schedule
    }

    /// What `GET /api/market/clock` answers.
    public struct Clock: Sendable, Equatable, Encodable {
        public let isOpen: Bool
        public let nextOpen: Date
        public let nextClose: Date
        public let timestamp: Date
    }

    /// One trading session.
    public struct Session: Sendable, Equatable {
        public let open: Date
        public let close: Date
    }

    public func clock(at now: Date) -> Clock {
        let current = session(endingAfter: now)
        if current.open <= now {
            let following = session(endingAfter: current.close)
            return Clock(isOpen: true, nextOpen: following.open, nextClose: current.close, timestamp: now)
        }
        return Clock(isOpen: false, nextOpen: current.open, nextClose: current.close, timestamp: now)
    }

    /// The session in progress at `moment`, or else the next one.
    public func session(endingAfter moment: Date) -> Session {
        let calendar = calendar
        var day = calendar.dateComponents([.year, .month, .day], from: moment)
        // A session is found within a week whatever the holidays.
        for _ in 0..<14 {
            if let session = session(on: day, calendar: calendar), session.close > moment { return session }
            let next = calendar.date(byAdding: .day, value: 1, to: calendar.date(from: day)!)!
            day = calendar.dateComponents([.year, .month, .day], from: next)
        }
        preconditionFailure("no trading session within two weeks of \(moment)")
    }

    /// The market's day (`YYYY-MM-DD` in `timeZone`) of a moment.
    public func day(of moment: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: moment)
        // Padded by hand: `String(format:)` costs more than the calendar (a history asks
        // for thousands of days).
        func padded(_ number: Int, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(parts.year ?? 0, 4))-\(padded(parts.month ?? 0, 2))-\(padded(parts.day ?? 0, 2))"
    }

    /// When a market day (`YYYY-MM-DD`) starts: its midnight in `timeZone` (SQL's
    /// `market_day_start`).
    public func start(of day: String) -> Date? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
    }

    /// Midday of a market day (`YYYY-MM-DD`), safely inside it whatever the offset.
    public func midday(of day: String) -> Date? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12))
    }

    /// When a market day (`YYYY-MM-DD`) closes, for a fill at its close: its session's
    /// close, or 16:00 where the session does not end that day (`always`) or there is none.
    public func closing(of day: String) -> Date? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let calendar = calendar
        let components = DateComponents(year: parts[0], month: parts[1], day: parts[2])
        if let session = session(on: components, calendar: calendar), self.day(of: session.close) == day { return session.close }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 16))
    }

    /// Every session that opens on a day from `first`'s through `last`'s (days in `timeZone`).
    public func sessions(from first: Date, through last: Date) -> [Session] {
        let calendar = calendar
        let stop = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: last))!
        var result: [Session] = []
        var next = session(endingAfter: calendar.startOfDay(for: first))
        while next.open < stop {
            result.append(next)
            next = session(endingAfter: next.close)
        }
        return result
    }

    /// The last `count` days with a session before `day` (`YYYY-MM-DD`), oldest first.
    public func tradingDays(count: Int, before day: String) -> [String] {
        guard count > 0, let end = midday(of: day) else { return [] }
        let last = calendar.date(byAdding: .day, value: -1, to: end)!
        // Five sessions a week at least, less ten holidays a year: 1.6 calendar days each.
        let first = calendar.date(byAdding: .day, value: -(count * 8 / 5 + 30), to: last)!
        return sessions(from: first, through: last).suffix(count).map { self.day(of: $0.open) }
    }

    /// The first `count` days with a session on or after `day` (`YYYY-MM-DD`), oldest first.
    public func tradingDays(count: Int, from day: String) -> [String] {
        guard count > 0, let first = midday(of: day) else { return [] }
        let last = calendar.date(byAdding: .day, value: count * 8 / 5 + 30, to: first)!
        return sessions(from: first, through: last).prefix(count).map { self.day(of: $0.open) }
    }

    /// Where sessions are counted: New York for `nyse`, UTC for `always`.
    public var timeZone: TimeZone {
        schedule == .always ? TimeZone(identifier: "UTC")! : Self.newYork
    }

    /// The zone's name, as SQL's `market_day` and `market_day_start` take it.
    public var zone: String { timeZone.identifier }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// The exchange's time zone: the `nyse` schedule's, and the one Alpaca's API speaks
    /// whatever the schedule (it stamps daily bars at New York's midnight and dates
    /// activities by New York's day).
    public static let newYorkZone = "America/New_York"
    private static let newYork = TimeZone(identifier: newYorkZone)!

    private func session(on day: DateComponents, calendar: Calendar) -> Session? {
        func at(_ hour: Int, _ minute: Int) -> Date {
            calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: hour, minute: minute))!
        }
        switch schedule {
        case .always:
            let open = at(0, 0)
            return Session(open: open, close: calendar.date(byAdding: .day, value: 1, to: open)!)
        case .nyse:
            let date = NYSEDay(year: day.year!, month: day.month!, day: day.day!)
            guard !date.isWeekend, !Self.holidays(in: date.year).contains(date) else { return nil }
            let closeHour = Self.earlyCloses(in: date.year).contains(date) ? 13 : 16
            return Session(open: at(9, 30), close: at(closeHour, 0))
        }
    }

    /// The days the exchange is closed all day in `year`, as observed.
    static func holidays(in year: Int) -> Set<NYSEDay> {
        var days: Set<NYSEDay> = [
            .nth(3, weekday: .monday, month: 1, year: year),  // Martin Luther King Jr. Day
            .nth(3, weekday: .monday, month: 2, year: year),  // Washington's Birthday
            NYSEDay.easter(year).adding(days: -2),  // Good Friday
            .last(weekday: .monday, month: 5, year: year),  // Memorial Day
            .nth(1, weekday: .monday, month: 9, year: year),  // Labor Day
            .nth(4, weekday: .thursday, month: 11, year: year),  // Thanksgiving
        ]
        // A Saturday holiday is observed on Friday, a Sunday one on Monday; except that
        // New Year's Day on a Saturday is not made up (the Friday is in the old year).
        let newYear = NYSEDay(year: year, month: 1, day: 1)
        if newYear.weekday != .saturday { days.insert(newYear.observed) }
        for (month, day) in [(7, 4), (12, 25)] { days.insert(NYSEDay(year: year, month: month, day: day).observed) }
        if year >= 2022 { days.insert(NYSEDay(year: year, month: 6, day: 19).observed) }  // Juneteenth
        return days
    }

    /// The days the exchange closes at 13:00 in `year`.
    static func earlyCloses(in year: Int) -> Set<NYSEDay> {
        var days: Set<NYSEDay> = [NYSEDay.nth(4, weekday: .thursday, month: 11, year: year).adding(days: 1)]
        for (month, day) in [(7, 3), (12, 24)] {
            let date = NYSEDay(year: year, month: month, day: day)
            if [.monday, .tuesday, .wednesday, .thursday].contains(date.weekday) { days.insert(date) }
        }
        return days
    }
}

/// A calendar day, for the exchange's holiday rules.
struct NYSEDay: Hashable, Sendable, CustomStringConvertible {
    enum Weekday: Int { case sunday = 1, monday, tuesday, wednesday, thursday, friday, saturday }

    let year: Int
    let month: Int
    let day: Int

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    private var date: Date { Self.calendar.date(from: DateComponents(year: year, month: month, day: day, hour: 12))! }

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    private init(_ date: Date) {
        let parts = Self.calendar.dateComponents([.year, .month, .day], from: date)
        self.init(year: parts.year!, month: parts.month!, day: parts.day!)
    }

    var weekday: Weekday { Weekday(rawValue: Self.calendar.component(.weekday, from: date))! }
    var isWeekend: Bool { weekday == .saturday || weekday == .sunday }

    func adding(days: Int) -> NYSEDay {
        NYSEDay(Self.calendar.date(byAdding: .day, value: days, to: date)!)
    }

    /// Saturday → the Friday before, Sunday → the Monday after.
    var observed: NYSEDay {
        switch weekday {
        case .saturday: adding(days: -1)
        case .sunday: adding(days: 1)
        default: self
        }
    }

    /// The `n`th `weekday` of the month.
    static func nth(_ n: Int, weekday: Weekday, month: Int, year: Int) -> NYSEDay {
        let first = NYSEDay(year: year, month: month, day: 1)
        let offset = (weekday.rawValue - first.weekday.rawValue + 7) % 7
        return first.adding(days: offset + 7 * (n - 1))
    }

    /// The last `weekday` of the month.
    static func last(weekday: Weekday, month: Int, year: Int) -> NYSEDay {
        let next = month == 12 ? NYSEDay(year: year + 1, month: 1, day: 1) : NYSEDay(year: year, month: month + 1, day: 1)
        let last = next.adding(days: -1)
        return last.adding(days: -((last.weekday.rawValue - weekday.rawValue + 7) % 7))
    }

    /// Easter Sunday (the anonymous Gregorian algorithm).
    static func easter(_ year: Int) -> NYSEDay {
        let a = year % 19, b = year / 100, c = year % 100, d = b / 4, e = b % 4
        let f = (b + 8) / 25, g = (b - f + 1) / 3, h = (19 * a + b - d - g + 15) % 30
        let i = c / 4, k = c % 4, l = (32 + 2 * e + 2 * i - h - k) % 7
        let m = (a + 11 * h + 22 * l) / 451
        let month = (h + l - 7 * m + 114) / 31, day = (h + l - 7 * m + 114) % 31 + 1
        return NYSEDay(year: year, month: month, day: day)
    }

    var description: String { String(format: "%04d-%02d-%02d", year, month, day) }
}
