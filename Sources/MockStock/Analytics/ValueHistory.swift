import Foundation
import Hummingbird

/// `GET /api/portfolios/{id}/history`: the portfolio's value at the end of each trading
/// day (or week, or month) of a range.
struct ValueHistory: ResponseEncodable, Sendable {
    struct Point: Encodable, Sendable {
        let date: String
        let cash: String
        let holdingsValue: String
        let netWorth: String
        /// Money paid in (+) or taken out (−) since the previous point: starting cash,
        /// deposits, withdrawals, rewards and adjustments. Dividends are returns, not inflows.
        let netInflow: String
    }

    let currency: String
    let points: [Point]
}

/// How far apart history points are.
enum HistoryInterval: String, Sendable {
    case day, week, month
}

/// The one owner of a portfolio's value over time: past days from `ValueHistoryStore`,
/// today at live prices (the same valuation as `GET /api/portfolio`). Points fall on the
/// market's trading days (`MarketHours`); a week or month is its last trading day.
struct ValueHistoryService: Sendable {
    let store: ValueHistoryStore
    let trading: TradingService
    /// The market's days: which day it is, and the trading days of a range.
    let clock: MarketClock
    let fx: FxStore

    /// The longest range one request may cover.
    static let maximumYears = 10

    /// A point in numbers, for those who compute with them (`/v2`'s portfolio history).
    struct Value: Sendable {
        let day: String
        let cash: Decimal
        let holdingsValue: Decimal
        /// As the database reckons it (SQL `net_worth`).
        let netWorth: Decimal
        let netInflow: Decimal
    }

    /// The range is clamped to the portfolio's life (from its creation to today); `from`
    /// and `to` are days in the market's time zone. The values are in the portfolio's own
    /// currency (`currency`): dollars, or a league's.
    func values(userID: Int, portfolioID: Int?, from: String?, to: String?, interval: HistoryInterval) async throws -> (currency: String, values: [Value]) {
        let live = try await trading.portfolio(userID: userID, id: portfolioID)
        return (live.currency, try await values(of: live, from: from, to: to, interval: interval))
    }

    private func values(of live: PortfolioValuation, from: String?, to: String?, interval: HistoryInterval) async throws -> [Value] {
        guard let (days, today, start) = try await calendar(of: live.id, from: from, to: to) else { return [] }
        // Only the last trading day of each period is a point (inflows are running sums, so
        // what came in between points needs no other day).
        let ends = days.indices.filter { $0 == days.count - 1 || Self.period(days[$0], interval) != Self.period(days[$0 + 1], interval) }
            .map { days[$0] }
        guard !ends.isEmpty else { return [] }
        // The day before the first, for what was paid in before the range.
        let anchor = dayString(start.addingTimeInterval(-86_400))
        let past = ends.last == today ? Array(ends.dropLast()) : ends
        let rows = try await store.days(portfolioID: live.id, days: [anchor] + past, timeZone: clock.zone, today: today)
        var inflowBefore = rows.first?.inflowToDate ?? 0
        var values: [Value] = []
        for row in rows.dropFirst() {
            values.append(Value(day: row.day, cash: row.cash, holdingsValue: row.holdingsValue, netWorth: row.netWorth,
                                netInflow: row.inflowToDate - inflowBefore))
            inflowBefore = row.inflowToDate
        }
        // Today is the portfolio as it stands: its cash and holdings as it shows them (live
        // prices), and all paid in so far.
        if past.count < ends.count {
            let paidIn = try await store.paidIn(portfolioID: live.id)
            values.append(Value(
                day: today, cash: live.cash, holdingsValue: live.holdingsValue, netWorth: live.netWorth,
                netInflow: paidIn - inflowBefore
            ))
        }
        return values
    }

    /// The days a portfolio's history has points on, from its creation (or `from`) to
    /// `to` or today, today (whose point is the portfolio as it stands) and the first day:
    /// the market's trading days; for a scenario league's portfolio, the league's days
    /// (their dates, `bar_days`) up to the league's day now, which is its today. Nil for
    /// an empty range.
    private func calendar(of portfolioID: Int, from: String?, to: String?) async throws -> (days: [String], today: String, start: Date)? {
        if let league = try await store.leagueCalendar(portfolioID: portfolioID) {
            let days = league.days.filter { $0 >= max(league.joined, from ?? $0) && $0 <= (to ?? $0) }
            guard let first = days.first, let start = date(first) else { return nil }
            return (days, league.days.last ?? first, start)
        }
        guard let created = try await store.createdAt(portfolioID: portfolioID) else { throw TradingError.noSuchPortfolio }
        let today = clock.today()
        let first = max(from ?? dayString(created), dayString(created))
        let last = min(to ?? today, today)
        guard let start = date(first), let end = date(last), start <= end else { return nil }
        guard end.timeIntervalSince(start) <= Double(Self.maximumYears) * 366 * 86_400 else {
            throw InvalidInput("A history covers at most \(Self.maximumYears) years.")
        }
        var days = clock.hours.sessions(from: start, through: end).map { clock.day(of: $0.open) }
        if days.last != last && last == today { days.append(today) }
        return (days, today, start)
    }

    /// Portfolios are valued in US dollars (every instrument's currency) unless they hold
    /// a league's own.
    static let currency = FxCurrency.dollar

    /// The values (in `source`) in `currency`, each converted at its own day's rate
    /// (`fx_rate`) and rounded to the cent; a day without a rate is `FxError.noRate`.
    func converted(_ values: [Value], from source: String, to currency: String) async throws -> [Value] {
        guard currency != source, !values.isEmpty else { return values }
        let rates = try await fx.rates(from: source, to: currency, days: values.map(\.day))
        return try values.map { value in
            guard let rate = rates[value.day] else { throw FxError.noRate(source, currency) }
            return Value(
                day: value.day, cash: (value.cash * rate).rounded(2), holdingsValue: (value.holdingsValue * rate).rounded(2),
                netWorth: (value.netWorth * rate).rounded(2), netInflow: (value.netInflow * rate).rounded(2)
            )
        }
    }

    /// `requested`, else the portfolio's base currency.
    func currency(_ requested: String?, userID: Int, portfolioID: Int?) async throws -> String {
        if let requested { return requested }
        return try await store.baseCurrency(userID: userID, portfolioID: portfolioID) ?? Self.currency
    }

    func history(
        userID: Int, portfolioID: Int?, from: String?, to: String?, interval: HistoryInterval, currency requested: String? = nil
    ) async throws -> ValueHistory {
        let currency = try await currency(requested, userID: userID, portfolioID: portfolioID)
        let (source, values) = try await values(userID: userID, portfolioID: portfolioID, from: from, to: to, interval: interval)
        let converted = try await converted(values, from: source, to: currency)
        return ValueHistory(currency: currency, points: converted.map {
            ValueHistory.Point(
                date: $0.day, cash: $0.cash.moneyString, holdingsValue: $0.holdingsValue.moneyString,
                netWorth: $0.netWorth.moneyString, netInflow: $0.netInflow.moneyString
            )
        })
    }

    /// Which week (from Monday) or month a day falls in.
    private static func period(_ day: String, _ interval: HistoryInterval) -> String {
        switch interval {
        case .day: return day
        case .month: return String(day.prefix(7))
        case .week:
            // Day 0 (1970-01-01) was a Thursday: weeks counted from Mondays.
            let number = dayNumber(day) ?? 0
            return String((number + 3 >= 0 ? number + 3 : number - 3) / 7)
        }
    }

    /// Days since 1970-01-01 of a `YYYY-MM-DD` day (proleptic Gregorian, by arithmetic: a
    /// history has thousands of days, too many for a formatter each).
    static func dayNumber(_ day: String) -> Int? {
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let (month, dayOfMonth) = (parts[1], parts[2])
        let year = month <= 2 ? parts[0] - 1 : parts[0]
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + dayOfMonth - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Days are the market's (`MarketClock`).
    func dayString(_ date: Date) -> String { clock.day(of: date) }

    func date(_ day: String) -> Date? { clock.hours.midday(of: day) }
}
