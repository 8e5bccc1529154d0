import Foundation
import Postgres

/// League standings. Net worth has one definition, the SQL function
/// `league_standings_live`. Small leagues are ranked live on every request; big leagues
/// (more than `liveLimit` members) are read from a snapshot that `StandingsService`
/// refreshes every few seconds; finished leagues from the snapshot frozen at their end.
struct StandingsStore: Sendable {
    let pool: PostgresConnectionPool
    /// Leagues with more members than this are ranked from snapshots.
    let liveLimit: Int
    /// The day a rank is recorded for.
    let clock: MarketClock

    struct StandingRecord: Sendable {
        let rank: Int
        let userID: Int
        let username: String
        let netWorth: Decimal
        let cash: Decimal
        let holdingsValue: Decimal
        let paidIn: Decimal
    }

    struct Page: Sendable {
        let items: [StandingRecord]
        let total: Int
        /// When the prices and portfolios ranked were read.
        let asOf: Date
    }

    private static let columns = "rank, user_id, username, net_worth, cash, holdings_value, paid_in"

    /// One page of the league's standings, best first.
    func page(of league: LeagueStore.LeagueRecord, limit: Int, offset: Int) async throws -> Page {
        if league.finishedAt != nil || league.memberCount > liveLimit, let snapshot = try await snapshotPage(league.id, limit: limit, offset: offset) {
            return snapshot
        }
        let rows = try await pool.query(
            """
            SELECT \(unescaped: Self.columns), count(*) OVER (), now()
            FROM league_standings_live(\(league.id)) ORDER BY place LIMIT \(limit) OFFSET \(offset)
            """
        )
        let items = try rows.map(Self.record)
        let total = try rows.first?.decode(Int.self, column: 7) ?? league.memberCount
        let asOf = try rows.first?.decode(Date.self, column: 8) ?? Date()
        return Page(items: items, total: total, asOf: asOf)
    }

    /// A page from the league's snapshot; nil when it has none yet.
    private func snapshotPage(_ leagueID: Int, limit: Int, offset: Int) async throws -> Page? {
        let rows = try await pool.query(
            """
            SELECT \(unescaped: Self.columns), s.members, s.taken_at
            FROM league_snapshots s LEFT JOIN LATERAL (
                SELECT * FROM league_standings st
                WHERE st.league_id = s.league_id AND st.place > \(offset) ORDER BY st.place LIMIT \(limit)
            ) page ON true
            WHERE s.league_id = \(leagueID)
            ORDER BY page.place
            """
        )
        guard let first = rows.first else { return nil }
        let (total, takenAt) = try (first.decode(Int.self, column: 7), first.decode(Date.self, column: 8))
        let items = try rows.filter { try $0.decode(Int?.self, column: 1) != nil }.map(Self.record)
        return Page(items: items, total: total, asOf: takenAt)
    }

    /// The standing in the first seven columns (`columns`) of a row that may hold more.
    private static func record(_ row: PostgresRow) throws -> StandingRecord {
        StandingRecord(
            rank: try row.decode(Int.self, column: 0), userID: try row.decode(Int.self, column: 1),
            username: try row.decode(String.self, column: 2), netWorth: try row.decode(Decimal.self, column: 3),
            cash: try row.decode(Decimal.self, column: 4), holdingsValue: try row.decode(Decimal.self, column: 5),
            paidIn: try row.decode(Decimal.self, column: 6)
        )
    }

    // MARK: Keeping snapshots and history

    /// Replaces the league's snapshot with its live standings (inside `session`'s
    /// transaction, so readers see the old snapshot until it commits).
    private static func snapshot(_ leagueID: Int, in session: PostgresSession) async throws {
        // Ranking 100,000 members is a big query for an OLTP database: JIT compilation
        // would cost more than it saves, and the sort should stay in memory.
        try await session.execute("SET LOCAL jit = off")
        try await session.execute("SET LOCAL work_mem = '64MB'")
        try await session.execute("DELETE FROM league_standings WHERE league_id = \(leagueID)")
        let members = try await session.execute(
            "INSERT INTO league_standings SELECT \(leagueID), * FROM league_standings_live(\(leagueID))"
        )
        try await session.execute(
            """
            INSERT INTO league_snapshots (league_id, taken_at, members) VALUES (\(leagueID), now(), \(members))
            ON CONFLICT (league_id) DO UPDATE SET taken_at = excluded.taken_at, members = excluded.members
            """
        )
    }

    /// Refreshes the snapshots of big running leagues older than `maxAge`, oldest first.
    /// An advisory lock per league keeps server processes from refreshing the same one.
    /// Returns the leagues refreshed.
    @discardableResult
    func refreshSnapshots(maxAge: Duration) async throws -> [Int] {
        let due = try await pool.query(
            """
            SELECT l.id FROM leagues l LEFT JOIN league_snapshots s ON s.league_id = l.id
            WHERE l.finished_at IS NULL AND l.member_count > \(liveLimit)
              AND (s.taken_at IS NULL OR s.taken_at < now() - make_interval(secs => \(maxAge.inSeconds)))
            ORDER BY s.taken_at NULLS FIRST
            """
        ).decodeColumn(Int.self)
        var refreshed: [Int] = []
        for leagueID in due {
            let done = try await pool.withTransaction { session in
                guard try await session.query("SELECT pg_try_advisory_xact_lock(\(Self.lockSpace), \(Int32(truncatingIfNeeded: leagueID)))")
                    .decodeColumn(Bool.self) == [true]
                else { return false }
                try await Self.snapshot(leagueID, in: session)
                try await Self.recordHistory(leagueID, from: "league_standings WHERE league_id = \(leagueID)", on: clock.today(), in: session)
                return true
            }
            if done { refreshed.append(leagueID) }
        }
        return refreshed
    }

    /// Advisory-lock namespace of snapshot refreshes.
    private static let lockSpace: Int32 = 0x4C53  // "LS"

    /// The rank of each member of `source`'s rows on `day` (the market's), once a day: the
    /// first snapshot or round of the day is kept.
    private static func recordHistory(
        _ leagueID: Int, from source: PostgresQuery, on day: String, in session: PostgresSession
    ) async throws {
        try await session.execute(
            """
            INSERT INTO league_rank_history (league_id, user_id, day, rank, net_worth)
            SELECT \(leagueID), user_id, \(day)::date, rank, net_worth FROM \(source)
            ON CONFLICT (league_id, user_id, day) DO NOTHING
            """
        )
    }

    /// Records today's ranks of running small leagues that have none for today yet (big
    /// leagues record theirs with each snapshot). Returns how many leagues it recorded.
    @discardableResult
    func recordDailyHistory() async throws -> Int {
        let today = clock.today()
        let due = try await pool.query(
            """
            SELECT l.id FROM leagues l
            WHERE l.finished_at IS NULL AND l.starts_at <= now() AND l.member_count <= \(liveLimit)
              AND NOT EXISTS (SELECT 1 FROM league_rank_history h WHERE h.league_id = l.id AND h.day = \(today)::date)
            """
        ).decodeColumn(Int.self)
        for leagueID in due {
            try await pool.withTransaction { session in
                try await Self.recordHistory(leagueID, from: "league_standings_live(\(leagueID))", on: today, in: session)
            }
        }
        return due.count
    }

    /// Finishes leagues whose end has passed, one transaction each: the final standings
    /// are frozen in a snapshot and the day's history, every member is told their final
    /// rank, and the top three of a league of at least three earn `podium`. Row locks
    /// (SKIP LOCKED) let each league be finished by exactly one process. Returns them.
    @discardableResult
    func finishEndedLeagues() async throws -> [Int] {
        var finished: [Int] = []
        while let leagueID = try await finishOne() { finished.append(leagueID) }
        return finished
    }

    private func finishOne() async throws -> Int? {
        try await pool.withTransaction { session in
            guard let leagueID = try await session.query(
                """
                UPDATE leagues SET finished_at = now()
                WHERE id = (SELECT id FROM leagues WHERE finished_at IS NULL AND ends_at <= now()
                            ORDER BY ends_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id
                """
            ).decodeColumn(Int.self).first else { return nil }
            try await Self.snapshot(leagueID, in: session)
            try await session.execute(
                """
                INSERT INTO league_rank_history (league_id, user_id, day, rank, net_worth)
                SELECT league_id, user_id, \(clock.today())::date, rank, net_worth FROM league_standings WHERE league_id = \(leagueID)
                ON CONFLICT (league_id, user_id, day) DO UPDATE SET rank = excluded.rank, net_worth = excluded.net_worth
                """
            )
            try await session.execute(
                """
                SELECT notify(ranked.user_id, 'League ended: ' || ranked.name,
                              'You finished #' || ranked.rank || ' of ' || ranked.members || ' in "' || ranked.name
                              || '" with a net worth of ' || to_char(ranked.net_worth, 'FM999G999G999G990D00') || '.')
                FROM (SELECT s.user_id, s.rank, s.net_worth, l.name, count(*) OVER () AS members
                      FROM league_standings s JOIN leagues l ON l.id = s.league_id
                      WHERE s.league_id = \(leagueID)) ranked
                """
            )
            try await session.execute(
                """
                SELECT award_achievement(user_id, 'podium') FROM league_standings
                WHERE league_id = \(leagueID) AND rank <= 3
                  AND (SELECT members FROM league_snapshots WHERE league_id = \(leagueID)) >= 3
                ORDER BY user_id
                """
            )
            return leagueID
        }
    }

    struct HistoryPoint: Sendable {
        let day: String
        let rank: Int
        let netWorth: Decimal
    }

    /// A member's daily ranks in the league, oldest first (the last year).
    func history(leagueID: Int, userID: Int) async throws -> [HistoryPoint] {
        try await pool.query(
            """
            SELECT to_char(day, 'YYYY-MM-DD'), rank, net_worth FROM league_rank_history
            WHERE league_id = \(leagueID) AND user_id = \(userID) AND day > \(clock.today())::date - 366
            ORDER BY day
            """
        ).decode((String, Int, Decimal).self).map { HistoryPoint(day: $0.0, rank: $0.1, netWorth: $0.2) }
    }
}
