import Foundation
import Postgres

/// League standings. Net worth has one definition, the SQL function
/// `league_standings_live`. Small leagues are ranked live on every request; big leagues
/// (more than `liveLimit` members) are read from a snapshot that `StandingsService`
/// refreshes every few seconds, kept in unlogged tables (a cache: no WAL, empty after a
/// database crash); finished leagues from the snapshot frozen at their end, kept in
/// logged ones.
struct StandingsStore: Sendable {
    let pool: PostgresConnectionPool
    /// Live rankings of small leagues, final standings and rank history, which may be a
    /// little stale. A running big league's snapshot is read from the primary: its tables
    /// are unlogged, so a replica does not have them.
    var reads: StaleReads? = nil
    private var stale: StaleReads { reads ?? StaleReads(pool: pool) }
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
        let bot: Bool
        /// A bot's owner.
        let ownerUsername: String?
        /// How many times the member's league portfolio was reset.
        let resets: Int
        /// Risk figures over the league's days (`LeagueRiskService`; nil until computed).
        let sharpe: Decimal?
        let sortino: Decimal?
        let maxDrawdown: Decimal?
        let excessReturn: Decimal?
        /// Net worth against the money paid in, in percent (`return_percent`).
        let returnPercent: Decimal
        /// The name a host gave a student of a class roster (nil for anyone else).
        var displayName: String? = nil
        /// In a team league, the team this row ranks (its account holds the portfolio).
        var team: TeamPlace? = nil

        struct TeamPlace: Sendable {
            let id: Int
            let name: String
            let members: [String]
        }
    }

    /// Whom a page ranks: everyone, or humans or bots alone (ranked among themselves).
    enum Players: String, Sendable {
        case all, humans, bots

        /// The kind ranked (nil: both).
        var bot: Bool? { self == .all ? nil : self == .bots }
        /// The place and rank columns of that ranking.
        var place: String { self == .all ? "place" : "group_place" }
        var rank: String { self == .all ? "rank" : "group_rank" }
    }

    struct Page: Sendable {
        let items: [StandingRecord]
        let total: Int
        /// When the prices and portfolios ranked were read.
        let asOf: Date
    }

    /// What a snapshot keeps of `league_standings_live`, in its order.
    private static let kept = "place, rank, user_id, username, net_worth, cash, holdings_value, paid_in, bot, owner_username, group_place, group_rank"

    /// Where a league's snapshot is kept: a running big league's in the unlogged live
    /// tables, a finished league's final standings in the logged ones.
    enum Snapshot {
        case live, final

        var standings: String { self == .live ? "league_live_standings" : "league_standings" }
        var snapshots: String { self == .live ? "league_live_snapshots" : "league_snapshots" }
    }

    /// One page of the league's standings (of everyone, or of humans or bots alone), best
    /// first by `order` (by default the league's own). Net worth is the standings' own
    /// place; another order ranks the same rows by its key (`RankBy.key`), ties sharing a rank.
    func page(of league: LeagueStore.LeagueRecord, players: Players = .all, order: RankBy? = nil, limit: Int, offset: Int) async throws -> Page {
        let kept: Snapshot? = league.finishedAt != nil ? .final : league.memberCount > liveLimit ? .live : nil
        let order = order ?? league.rankBy
        if let kept, let snapshot = try await snapshotPage(league.id, from: kept, players: players, order: order, teams: league.teams,
                                                          limit: limit, offset: offset) {
            return snapshot
        }
        let rows = try await stale.query(
            """
            SELECT \(Self.columns(league.id, players: players, order: order, teams: league.teams)), count(*) OVER (), now()
            FROM league_standings_live(\(league.id)) s \(Self.risk(league.id))
            WHERE \(players.bot)::boolean IS NULL OR s.bot = \(players.bot)
            ORDER BY \(unescaped: Self.ordering(players, order)) LIMIT \(limit) OFFSET \(offset)
            """
        )
        let items = try rows.map(Self.record)
        let counted = try rows.first?.decode(Int.self, column: Self.recordColumns)
        let total = if let counted { counted } else { try await membersCounted(league, players) }
        let asOf = try rows.first?.decode(Date.self, column: Self.recordColumns + 1) ?? Date()
        return Page(items: items, total: total, asOf: asOf)
    }

    /// How many members a page past the end of the live standings counts: everyone, or
    /// the humans or bots alone.
    private func membersCounted(_ league: LeagueStore.LeagueRecord, _ players: Players) async throws -> Int {
        guard let bot = players.bot else { return league.memberCount }
        return try await stale.query(
            """
            SELECT count(*) FROM league_members m JOIN users u ON u.id = m.user_id
            WHERE m.league_id = \(league.id) AND (u.bot_owner_id IS NOT NULL) = \(bot)
            """
        )[0].decode(Int.self)
    }

    /// A page from the league's snapshot; nil when it has none yet. By net worth a page is
    /// one range of its place index and a kind's total its last place; another order sorts
    /// the league's rows of the snapshot.
    private func snapshotPage(
        _ leagueID: Int, from kept: Snapshot, players: Players, order: RankBy, teams: Bool, limit: Int, offset: Int
    ) async throws -> Page? {
        let reads = kept == .live ? StaleReads(pool: pool) : stale
        let rows: PostgresRows
        if order == .netWorth {
            let count: PostgresQuery = players == .all ? "k.members" : """
                coalesce((SELECT max(group_place) FROM \(unescaped: kept.standings) g WHERE g.league_id = k.league_id AND g.bot = \(players.bot)), 0)
                """
            rows = try await reads.query(
                """
                SELECT \(Self.columns(leagueID, players: players, order: order, teams: teams)), \(count), k.taken_at
                FROM \(unescaped: kept.snapshots) k LEFT JOIN LATERAL (
                    SELECT * FROM \(unescaped: kept.standings) st
                    WHERE st.league_id = k.league_id AND (\(players.bot)::boolean IS NULL OR st.bot = \(players.bot))
                      AND st.\(unescaped: players.place) > \(offset)
                    ORDER BY st.\(unescaped: players.place) LIMIT \(limit)
                ) s ON true \(Self.risk(leagueID))
                WHERE k.league_id = \(leagueID)
                ORDER BY s.\(unescaped: players.place)
                """
            )
        } else {
            // The page in a lateral subquery (numbered, to keep its order), so a snapshot
            // past whose end the page lies still answers, with its total and time.
            rows = try await reads.query(
                """
                SELECT page.*, (SELECT count(*) FROM \(unescaped: kept.standings) c
                                WHERE c.league_id = k.league_id AND (\(players.bot)::boolean IS NULL OR c.bot = \(players.bot))),
                       k.taken_at
                FROM \(unescaped: kept.snapshots) k LEFT JOIN LATERAL (
                    SELECT \(Self.columns(leagueID, players: players, order: order, teams: teams)),
                           row_number() OVER (ORDER BY \(unescaped: Self.ordering(players, order))) AS ordinal
                    FROM \(unescaped: kept.standings) s \(Self.risk(leagueID))
                    WHERE s.league_id = k.league_id AND (\(players.bot)::boolean IS NULL OR s.bot = \(players.bot))
                    ORDER BY \(unescaped: Self.ordering(players, order)) LIMIT \(limit) OFFSET \(offset)
                ) page ON true
                WHERE k.league_id = \(leagueID)
                ORDER BY page.ordinal
                """
            )
        }
        guard let first = rows.first else { return nil }
        // Past the standing's columns: the ordinal (another order only), the total, the time.
        let after = Self.recordColumns + (order == .netWorth ? 0 : 1)
        let (total, takenAt) = try (first.decode(Int.self, column: after), first.decode(Date.self, column: after + 1))
        let items = try rows.filter { try $0.decode(Int?.self, column: 1) != nil }.map(Self.record)
        return Page(items: items, total: total, asOf: takenAt)
    }

    /// A standing's columns (`record`) from the row `s` and its risk figures `r`: the rank
    /// by net worth is the standings' own (of everyone or of the kind); by another order,
    /// a rank over the rows the page ranks.
    /// A team league's rows are its teams' (`teams`): their id, name and members, looked up
    /// only there, since every row pays for the lookups.
    private static func columns(_ leagueID: Int, players: Players, order: RankBy, teams: Bool) -> PostgresQuery {
        let rank = order.rank ?? "s.\(players.rank)"
        let team: PostgresQuery = teams ? """
            (SELECT t.id FROM teams t WHERE t.account_id = s.user_id), (SELECT t.name FROM teams t WHERE t.account_id = s.user_id),
            (SELECT string_agg(u.username, ',' ORDER BY lower(u.username))
             FROM teams t JOIN team_members m ON m.team_id = t.id JOIN users u ON u.id = m.user_id WHERE t.account_id = s.user_id)
            """ : "NULL::int8, NULL::text, NULL::text"
        return """
            \(unescaped: rank), s.user_id, s.username, s.net_worth, s.cash, s.holdings_value, s.paid_in, s.bot, s.owner_username,
            coalesce((SELECT m.resets FROM league_members m WHERE m.league_id = \(leagueID) AND m.user_id = s.user_id), 0),
            r.sharpe, r.sortino, r.max_drawdown, r.excess_return, return_percent(s.net_worth, s.paid_in),
            (SELECT u.display_name FROM users u WHERE u.id = s.user_id), \(team)
            """
    }

    /// The members' risk figures (`LeagueRiskService`), joined to the rows `s`.
    private static func risk(_ leagueID: Int) -> PostgresQuery {
        "LEFT JOIN league_risk r ON r.league_id = \(leagueID) AND r.user_id = s.user_id"
    }

    /// A page's order: by its key, ties by net-worth place.
    private static func ordering(_ players: Players, _ order: RankBy) -> String {
        [order.key, "s.\(players.place)"].compactMap { $0 }.joined(separator: ", ")
    }

    /// How many columns a standing takes (`columns`): the resets, risk figures, display name and team included.
    private static let recordColumns = 19

    /// The standing in the first columns (`columns`) of a row that may hold more.
    private static func record(_ row: PostgresRow) throws -> StandingRecord {
        StandingRecord(
            rank: try row.decode(Int.self, column: 0), userID: try row.decode(Int.self, column: 1),
            username: try row.decode(String.self, column: 2), netWorth: try row.decode(Decimal.self, column: 3),
            cash: try row.decode(Decimal.self, column: 4), holdingsValue: try row.decode(Decimal.self, column: 5),
            paidIn: try row.decode(Decimal.self, column: 6), bot: try row.decode(Bool.self, column: 7),
            ownerUsername: try row.decode(String?.self, column: 8), resets: try row.decode(Int.self, column: 9),
            sharpe: try row.decode(Decimal?.self, column: 10), sortino: try row.decode(Decimal?.self, column: 11),
            maxDrawdown: try row.decode(Decimal?.self, column: 12), excessReturn: try row.decode(Decimal?.self, column: 13),
            returnPercent: try row.decode(Decimal?.self, column: 14) ?? 0, displayName: try row.decode(String?.self, column: 15),
            team: try row.decode(Int?.self, column: 16).map { id in
                StandingRecord.TeamPlace(id: id, name: try row.decode(String.self, column: 17), members: (try row.decode(String?.self, column: 18) ?? "").split(separator: ",").map(String.init))
            }
        )
    }

    // MARK: Keeping snapshots and history

    /// Replaces the league's snapshot with its live standings (inside `session`'s
    /// transaction, so readers see the old snapshot until it commits). A live snapshot
    /// also keeps the newest trade and cash movement committed before it was taken.
    private static func snapshot(_ leagueID: Int, into kept: Snapshot, in session: PostgresSession) async throws {
        // Ranking 100,000 members is a big query for an OLTP database: JIT compilation
        // would cost more than it saves, and the sort should stay in memory.
        try await session.execute("SET LOCAL jit = off")
        try await session.execute("SET LOCAL work_mem = '64MB'")
        // A live snapshot's watermarks are read before the standings, so a trade committed
        // in between is at worst seen twice.
        var watermarks: (columns: PostgresQuery, values: PostgresQuery, updates: PostgresQuery) = ("", "", "")
        if kept == .live {
            let (trades, cash) = try await session.query(
                "SELECT (SELECT coalesce(max(id), 0) FROM trades), (SELECT coalesce(max(id), 0) FROM cash_movements)"
            )[0].decode((Int, Int).self)
            watermarks = (", trades_seen, cash_movements_seen", ", \(trades), \(cash)",
                          ", trades_seen = excluded.trades_seen, cash_movements_seen = excluded.cash_movements_seen")
        }
        try await session.execute("DELETE FROM \(unescaped: kept.standings) WHERE league_id = \(leagueID)")
        let members = try await session.execute(
            """
            INSERT INTO \(unescaped: kept.standings) (league_id, \(unescaped: Self.kept))
            SELECT \(leagueID), \(unescaped: Self.kept) FROM league_standings_live(\(leagueID))
            """
        )
        try await session.execute(
            """
            INSERT INTO \(unescaped: kept.snapshots) (league_id, taken_at, members\(watermarks.columns))
            VALUES (\(leagueID), now(), \(members)\(watermarks.values))
            ON CONFLICT (league_id) DO UPDATE SET taken_at = excluded.taken_at, members = excluded.members\(watermarks.updates)
            """
        )
    }

    /// Whether league `l`'s live snapshot `s` (joined on the left) is due: it has none, it
    /// is older than `unchangedAge`, or it is older than `maxAge` and what it ranks may
    /// have changed since — a price or exchange rate moved, a trade or cash movement was
    /// made anywhere, or the league's members changed. Each is a probe of an index or of a
    /// small table, much cheaper than a refresh; a change committed while a snapshot was
    /// taken may be missed by these and is then picked up at `unchangedAge`.
    private static func due(maxAge: Duration, unchangedAge: Duration) -> PostgresQuery {
        """
        NOT league_finished(l)
        AND (s.taken_at IS NULL
             OR s.taken_at < now() - make_interval(secs => \(unchangedAge.inSeconds))
             OR (s.taken_at < now() - make_interval(secs => \(maxAge.inSeconds))
                 AND (s.members <> l.member_count
                      OR EXISTS (SELECT 1 FROM quotes q WHERE q.as_of > s.taken_at)
                      OR EXISTS (SELECT 1 FROM fx_quotes f WHERE f.as_of > s.taken_at)
                      OR (SELECT max(id) FROM trades) > s.trades_seen
                      OR (SELECT max(id) FROM cash_movements) > s.cash_movements_seen)))
        """
    }

    /// Refreshes the due snapshots (see `due`) of big running leagues, oldest first. An
    /// advisory lock per league keeps server processes from refreshing the same one, and
    /// the league is checked again under it. Returns the leagues refreshed.
    @discardableResult
    func refreshSnapshots(maxAge: Duration, unchangedAge: Duration = .seconds(60)) async throws -> [Int] {
        let due = Self.due(maxAge: maxAge, unchangedAge: unchangedAge)
        let leagues = try await pool.query(
            """
            SELECT l.id FROM leagues l LEFT JOIN league_live_snapshots s ON s.league_id = l.id
            WHERE l.member_count > \(liveLimit) AND \(due)
            ORDER BY s.taken_at NULLS FIRST
            """
        ).decodeColumn(Int.self)
        var refreshed: [Int] = []
        for leagueID in leagues {
            let done = try await pool.withTransaction { session in
                guard try await session.query("SELECT pg_try_advisory_xact_lock(\(Self.lockSpace), \(Int32(truncatingIfNeeded: leagueID)))")
                    .decodeColumn(Bool.self) == [true],
                    try await session.query(
                        "SELECT EXISTS (SELECT FROM leagues l LEFT JOIN league_live_snapshots s ON s.league_id = l.id WHERE l.id = \(leagueID) AND \(due))"
                    ).decodeColumn(Bool.self) == [true]
                else { return false }
                try await Self.snapshot(leagueID, into: .live, in: session)
                try await Self.recordHistory(
                    leagueID, from: "SELECT user_id, rank, net_worth FROM league_live_standings WHERE league_id = \(leagueID)",
                    on: clock.today(), in: session
                )
                return true
            }
            if done { refreshed.append(leagueID) }
        }
        return refreshed
    }

    /// Advisory-lock namespace of snapshot refreshes.
    private static let lockSpace: Int32 = 0x4C53  // "LS"

    /// The rank of each member of `source` (rows of user_id, rank, net_worth) on `day` (the
    /// market's), once a day: the first snapshot or round of the day is kept, and later ones
    /// find the day recorded with one index probe rather than a conflict per member.
    private static func recordHistory(
        _ leagueID: Int, from source: PostgresQuery, on day: String, in session: PostgresSession
    ) async throws {
        try await session.execute(
            """
            INSERT INTO league_rank_history (league_id, user_id, day, rank, net_worth)
            SELECT \(leagueID), ranked.user_id, \(day)::date, ranked.rank, ranked.net_worth FROM (\(source)) ranked
            WHERE NOT EXISTS (SELECT 1 FROM league_rank_history h WHERE h.league_id = \(leagueID) AND h.day = \(day)::date)
            ON CONFLICT (league_id, user_id, day) DO NOTHING
            """
        )
    }

    /// Removes a league's live snapshot (it finished, or was deleted).
    static func dropLiveSnapshot(_ leagueID: Int, in session: PostgresSession) async throws {
        try await session.execute("DELETE FROM league_live_standings WHERE league_id = \(leagueID)")
        try await session.execute("DELETE FROM league_live_snapshots WHERE league_id = \(leagueID)")
    }

    /// Records today's ranks of running small leagues that have none for today yet (big
    /// leagues record theirs with each snapshot). Returns how many leagues it recorded.
    @discardableResult
    func recordDailyHistory() async throws -> Int {
        let today = clock.today()
        let due = try await pool.query(
            """
            SELECT l.id FROM leagues l
            WHERE league_running(l, now()) AND l.member_count <= \(liveLimit)
              AND NOT EXISTS (SELECT 1 FROM league_rank_history h WHERE h.league_id = l.id AND h.day = \(today)::date)
            """
        ).decodeColumn(Int.self)
        for leagueID in due {
            try await pool.withTransaction { session in
                try await Self.recordHistory(
                    leagueID, from: "SELECT user_id, rank, net_worth FROM league_standings_live(\(leagueID))", on: today, in: session
                )
            }
        }
        return due.count
    }

    /// Finishes leagues whose end has passed, one transaction each: the final standings
    /// are frozen in a snapshot and the day's history, every member is told their final
    /// rank in the league's order (`rankBy`, with the risk figures of its last run), and
    /// the top three of a league of at least three earn `podium`. Row locks
    /// (SKIP LOCKED) let each league be finished by exactly one process. Returns them.
    @discardableResult
    func finishEndedLeagues() async throws -> [Int] {
        var finished: [Int] = []
        while let leagueID = try await finishOne() { finished.append(leagueID) }
        return finished
    }

    private func finishOne() async throws -> Int? {
        try await pool.withTransaction { session in
            guard let (leagueID, order) = try await session.query(
                """
                -- A finished league is no longer frozen: trading has ended for good.
                UPDATE leagues SET finished_at = now(), frozen_at = NULL, frozen_reason = NULL
                WHERE id = (SELECT id FROM leagues l WHERE NOT league_finished(l) AND ends_at <= now()
                            ORDER BY ends_at LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id, rank_by
                """
            ).decode((Int, RankBy).self).first else { return nil }
            // The final rank is in the league's order, as its board shows it: by net worth
            // the standings' own, by another order the same rows ranked by its key.
            let ranked: PostgresQuery = """
                SELECT s.user_id, s.net_worth, \(unescaped: order.rank ?? "s.rank") AS rank, count(*) OVER () AS members, l.name, l.currency
                FROM league_standings s JOIN leagues l ON l.id = s.league_id \(Self.risk(leagueID))
                WHERE s.league_id = \(leagueID)
                """
            try await Self.snapshot(leagueID, into: .final, in: session)
            try await Self.dropLiveSnapshot(leagueID, in: session)
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
                              || '" with a net worth of ' || money_text(ranked.net_worth, ranked.currency) || '.')
                FROM (\(ranked)) ranked
                """
            )
            try await session.execute(
                """
                SELECT award_achievement(user_id, 'podium') FROM (\(ranked)) ranked
                WHERE rank <= 3 AND members >= 3
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
        try await stale.query(
            """
            SELECT to_char(day, 'YYYY-MM-DD'), rank, net_worth FROM league_rank_history
            WHERE league_id = \(leagueID) AND user_id = \(userID) AND day > \(clock.today())::date - 366
            ORDER BY day
            """
        ).decode((String, Int, Decimal).self).map { HistoryPoint(day: $0.0, rank: $0.1, netWorth: $0.2) }
    }
}
