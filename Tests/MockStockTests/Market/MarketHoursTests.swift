import Foundation
import HTTPTypes
import HummingbirdTesting
import Postgres
@testable import MockStock
import Testing
import TestSupport

@Suite("Market hours")
struct MarketHoursTests {
    static let nyse = MarketHours(schedule: .nyse)

    static func utc(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    @Test("the market clock: a moment's day is counted in the market's time zone; the market's day is the replayed one when replaying")
    func marketClock() async throws {
        let evening = Self.utc("2026-11-26T02:00:00Z")  // 21:00 on Wednesday 25 November in New York
        let nyse = MarketClock(hours: Self.nyse, now: { evening })
        #expect(nyse.today() == "2026-11-25")
        #expect(try await nyse.marketDay() == "2026-11-25")
        let always = MarketClock(hours: MarketHours(schedule: .always), now: { evening })
        #expect(always.today() == "2026-11-26")
        let replaying = MarketClock(hours: Self.nyse, now: { evening }, replayDay: { "2021-03-04" })
        #expect(try await replaying.marketDay() == "2021-03-04")
        #expect(replaying.today() == "2026-11-25")
    }

    @Test("SQL's market_day and market_day_start count days as MarketHours does, in the market's zone, across a change of clocks",
          arguments: [MarketHours.Schedule.nyse, .always])
    func marketDaySQL(_ schedule: MarketHours.Schedule) async throws {
        let hours = MarketHours(schedule: schedule)
        let texts = ["2026-11-26T02:00:00Z", "2026-11-26T05:00:00Z", "2026-03-08T06:59:59Z", "2026-03-08T07:00:00Z",
                     "2026-07-04T03:59:59Z", "2026-07-04T04:00:00Z"]
        let moments = texts.map(Self.utc)
        let days = ["2026-03-08", "2026-03-09", "2026-11-01", "2026-11-26"]
        try await TemporaryDatabase.with { database in
            try await TestApp.run(on: database) { _ in }
            try await database.withPool { pool in
                let sqlDays = try await pool.query(
                    "SELECT market_day(m, \(hours.zone))::text FROM unnest(\(texts)::timestamptz[]) WITH ORDINALITY AS x (m, i) ORDER BY i"
                ).decodeColumn(String.self)
                #expect(sqlDays == moments.map(hours.day(of:)))
                let starts = try await pool.query(
                    "SELECT market_day_start(d, \(hours.zone)) FROM unnest(\(days)::date[]) WITH ORDINALITY AS x (d, i) ORDER BY i"
                ).decodeColumn(Date.self)
                #expect(starts == days.map { hours.start(of: $0)! })
                // A day's start belongs to that day, and the moment before it to the day before.
                #expect(starts.map(hours.day(of:)) == days)
                #expect(starts.map { hours.day(of: $0.addingTimeInterval(-1)) } == ["2026-03-07", "2026-03-08", "2026-10-31", "2026-11-25"])
            }
        }
    }

    @Test("NYSE: open 09:30–16:00 New York time, in winter and in summer")
    func regularSessions() {
        // Monday 23 November 2026, 10:00 EST.
        let winter = Self.nyse.clock(at: Self.utc("2026-11-23T15:00:00Z"))
        #expect(winter.isOpen)
        #expect(winter.nextClose == Self.utc("2026-11-23T21:00:00Z"))
        #expect(winter.nextOpen == Self.utc("2026-11-24T14:30:00Z"))
        // The Monday after clocks went forward (8 March 2026): 09:30 EDT is 13:30 UTC.
        let summer = Self.nyse.clock(at: Self.utc("2026-03-09T13:00:00Z"))
        #expect(!summer.isOpen)
        #expect(summer.nextOpen == Self.utc("2026-03-09T13:30:00Z"))
        #expect(summer.nextClose == Self.utc("2026-03-09T20:00:00Z"))
        // After the close: the next weekday's session.
        let evening = Self.nyse.clock(at: Self.utc("2026-11-23T21:00:00Z"))
        #expect(!evening.isOpen)
        #expect(evening.nextOpen == Self.utc("2026-11-24T14:30:00Z"))
    }

    @Test("NYSE: weekends and holidays are closed; early closes at 13:00")
    func holidaysAndWeekends() {
        // Thanksgiving, then the day after closes at 13:00 EST.
        let thanksgiving = Self.nyse.clock(at: Self.utc("2026-11-26T15:00:00Z"))
        #expect(!thanksgiving.isOpen)
        #expect(thanksgiving.nextOpen == Self.utc("2026-11-27T14:30:00Z"))
        #expect(thanksgiving.nextClose == Self.utc("2026-11-27T18:00:00Z"))
        // Saturday: Monday's open.
        #expect(Self.nyse.clock(at: Self.utc("2026-11-28T15:00:00Z")).nextOpen == Self.utc("2026-11-30T14:30:00Z"))
        // Good Friday 2026 is 3 April; Monday 6 April opens at 13:30 UTC (EDT).
        let goodFriday = Self.nyse.clock(at: Self.utc("2026-04-03T15:00:00Z"))
        #expect(!goodFriday.isOpen)
        #expect(goodFriday.nextOpen == Self.utc("2026-04-06T13:30:00Z"))
        // 3 July 2025 (Thursday) closes at 13:00 EDT.
        #expect(Self.nyse.clock(at: Self.utc("2025-07-03T14:00:00Z")).nextClose == Self.utc("2025-07-03T17:00:00Z"))
    }

    @Test("NYSE holidays follow the exchange's published calendars", arguments: [
        (2026, ["2026-01-01", "2026-01-19", "2026-02-16", "2026-04-03", "2026-05-25", "2026-06-19", "2026-07-03",
                "2026-09-07", "2026-11-26", "2026-12-25"]),
        // New Year's Day on a Saturday: no holiday; Juneteenth on a Sunday: the Monday.
        (2022, ["2022-01-17", "2022-02-21", "2022-04-15", "2022-05-30", "2022-06-20", "2022-07-04",
                "2022-09-05", "2022-11-24", "2022-12-26"]),
        (2021, ["2021-01-01", "2021-01-18", "2021-02-15", "2021-04-02", "2021-05-31", "2021-07-05", "2021-09-06",
                "2021-11-25", "2021-12-24"]),
    ])
    func publishedHolidays(_ year: Int, _ expected: [String]) {
        #expect(MarketHours.holidays(in: year).map(\.description).sorted() == expected.sorted())
    }

    @Test("New Year's Day on a Saturday is not made up on the Friday before")
    func newYearOnSaturday() {
        // 1 January 2022 was a Saturday: Friday 31 December 2021 traded.
        #expect(Self.nyse.clock(at: Self.utc("2021-12-31T15:00:00Z")).isOpen)
        #expect(!MarketHours.holidays(in: 2022).contains(NYSEDay(year: 2021, month: 12, day: 31)))
    }

    @Test("always: open at every moment; sessions are UTC days")
    func alwaysOpen() {
        let always = MarketHours(schedule: .always)
        for moment in ["2026-11-28T03:00:00Z", "2026-11-26T15:00:00Z", "2026-12-31T23:59:59Z"] {
            let clock = always.clock(at: Self.utc(moment))
            #expect(clock.isOpen)
            #expect(clock.nextClose == clock.nextOpen)
            #expect(clock.nextClose > clock.timestamp && clock.nextClose.timeIntervalSince(clock.timestamp) <= 86_400)
        }
        #expect(always.clock(at: Self.utc("2026-12-31T23:59:59Z")).nextClose == Self.utc("2027-01-01T00:00:00Z"))
    }

    @Test("the trading days before a day skip weekends and holidays; an early close is a trading day")
    func tradingDaysBefore() {
        let nyse = MarketHours(schedule: .nyse)
        #expect(nyse.tradingDays(count: 4, before: "2026-11-30") == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-27"])
        #expect(nyse.tradingDays(count: 2, before: "2027-01-04") == ["2026-12-30", "2026-12-31"])
        let year = nyse.tradingDays(count: 756, before: "2026-11-25")
        #expect(year.count == 756 && year.last == "2026-11-24" && Set(year).count == 756 && year == year.sorted())
        #expect(MarketHours(schedule: .always).tradingDays(count: 2, before: "2026-11-30") == ["2026-11-28", "2026-11-29"])
    }

    @Test("GET /api/market/clock answers in both modes", arguments: [MarketHours.Schedule.always, .nyse])
    func clockRoute(_ schedule: MarketHours.Schedule) async throws {
        try await TestApp.run(configure: { $0.marketHours = schedule }) { client in
            let token = try await client.register("clockwatcher").token
            let response = try await client.get("/api/market/clock", token: token)
            #expect(response.status == .ok)
            struct ClockBody: Decodable { let isOpen: Bool; let nextOpen: String; let nextClose: String; let timestamp: String }
            let clock = try JSONDecoder().decode(ClockBody.self, from: Data(buffer: response.body))
            let formatter = ISO8601DateFormatter()
            let (open, close, now) = (formatter.date(from: clock.nextOpen)!, formatter.date(from: clock.nextClose)!, formatter.date(from: clock.timestamp)!)
            #expect(open > now && close > now)
            if schedule == .always {
                #expect(clock.isOpen && open == close)
            } else {
                #expect(clock.isOpen == (close < open))
            }
            #expect(try await client.get("/api/market/clock", token: nil).status == .unauthorized)
        }
    }
}
