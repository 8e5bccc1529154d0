import Foundation
import Postgres

/// Leagues, membership, bans and league portfolios.
struct LeagueStore: Sendable {
    let pool: PostgresConnectionPool
    /// What personal portfolios trade under; leagues created before rules existed pay its flat commission.
    let serverRules: TradingRules

    struct LeagueRecord: Sendable {
        let id: Int
        let name: String
        let code: String
        let ownerID: Int
        let mode: LeagueMode
        let startingCash: Decimal
        let startsAt: Date
        let endsAt: Date?
        let maxMembers: Int?
        let memberCount: Int
        let createdAt: Date
        /// When the league's end was processed (final standings frozen).
        let finishedAt: Date?
        /// The rules its league portfolios trade under.
        let rules: TradingRules
        let bots: BotPolicy
        /// When the late-join window closes (nil: when the league ends).
        let joinUntil: Date?
        /// False when the owner hosts without a seat (no league portfolio, never ranked).
        let ownerPlays: Bool
        /// When the host froze trading (nil: not frozen), and the reason members were told.
        let frozenAt: Date?
        let frozenReason: String?
        /// How many times a member may reset their own league portfolio.
        let resetsAllowed: Int
        /// Whether every order and trade on its league portfolios needs a journal note.
        let journalRequired: Bool
        /// How its standings are ordered, and the benchmark of its members' excess returns.
        let rankBy: RankBy
        let benchmark: String
        /// How many days after its end its managed students are erased (nil: kept).
        var deleteManagedAfterDays: Int? = nil
        /// A team league: members trade their team's portfolio, and teams are ranked.
        var teams: Bool = false
        /// A scenario league's market (nil: the league trades the real market).
        var market: LeagueMarketSummary? = nil
    }

    struct NewLeague: Sendable {
        let name: String
        let mode: LeagueMode
        let startingCash: Decimal
        let startsAt: Date
        let endsAt: Date?
        let maxMembers: Int?
        let rules: TradingRules
        let bots: BotPolicy
        let joinUntil: Date?
        let ownerPlays: Bool
        let resetsAllowed: Int
        let journalRequired: Bool
        let rankBy: RankBy
        let benchmark: String
        var deleteManagedAfterDays: Int? = nil
        var teams: Bool = false
    }

    /// What the owner changes after creation (`PATCH /api/leagues/{id}`): a name, a bot
    /// policy, and for the end, the late-join window and the member cap whether the body
    /// names them (a `nil` value clears them).
    struct Changes: Sendable {
        var name: String?
        var bots: BotPolicy?
        var endsAt: (named: Bool, value: Date?) = (false, nil)
        var joinUntil: (named: Bool, value: Date?) = (false, nil)
        var maxMembers: (named: Bool, value: Int?) = (false, nil)
        var journalRequired: Bool?
        var rankBy: RankBy?
        /// A new benchmark; the members' risk figures are computed again soon after.
        var benchmark: String?
        var deleteManagedAfterDays: (named: Bool, value: Int?) = (false, nil)

        /// The fields this change names, as the audit log records them.
        var fieldsNamed: [String] {
            [("name", name != nil), ("bots", bots != nil), ("endsAt", endsAt.named), ("joinUntil", joinUntil.named),
             ("maxMembers", maxMembers.named), ("journalRequired", journalRequired != nil), ("rankBy", rankBy != nil),
             ("benchmark", benchmark != nil), ("deleteManagedAfterDays", deleteManagedAfterDays.named)].filter(\.1).map(\.0)
        }
    }

    static let columns = "id, name, code, owner_id, mode, starting_cash, starts_at, ends_at, max_members, member_count, created_at, finished_at, bots, join_until, owner_plays, frozen_at, frozen_reason, resets_allowed, journal_required, rank_by, benchmark, delete_managed_after_days, teams, "
        + LeagueMarketStore.leagueColumn + ", " + LeagueRulesColumns.select

    /// Creates the league with its owner as first member (and, for an isolated league,
    /// the owner's league portfolio with its starting cash), in one statement; a host who
    /// does not play takes no seat. `then` runs in the same transaction with the new
    /// league's id (a scenario league's market is made there), and the league is read
    /// again after it.
    func create(
        _ league: NewLeague, ownerID: Int, then: (@Sendable (_ leagueID: Int, _ session: PostgresSession) async throws -> Void)? = nil
    ) async throws -> LeagueRecord {
        for _ in 0..<5 {
            do {
                return try await pool.withTransaction { session in
                    let made = try await insert(league, ownerID: ownerID, in: session)
                    guard let then else { return made }
                    try await then(made.id, session)
                    return try record(try await session.query("SELECT \(unescaped: Self.columns) FROM leagues WHERE id = \(made.id)")[0])
                }
            } catch let error as PostgresError where error.code == .uniqueViolation && error.constraint == "leagues_code_key" {
                continue
            }
        }
        throw LeagueError.noFreeJoinCode
    }

    private func insert(_ league: NewLeague, ownerID: Int, in session: PostgresSession) async throws -> LeagueRecord {
        let rows = try await session.query(
            """
            WITH league AS (
                INSERT INTO leagues (name, code, owner_id, mode, starting_cash, starts_at, ends_at, max_members, member_count, bots,
                                     join_until, owner_plays, resets_allowed, journal_required, rank_by, benchmark,
                                     delete_managed_after_days, teams, \(unescaped: LeagueRulesColumns.names))
                VALUES (\(league.name), \(JoinCode.generate()), \(ownerID), \(league.mode), \(league.startingCash),
                        \(league.startsAt), \(league.endsAt), \(league.maxMembers.map(Int32.init)),
                        \(league.ownerPlays ? 1 : 0), \(league.bots), \(league.joinUntil), \(league.ownerPlays),
                        \(Int32(league.resetsAllowed)), \(league.journalRequired), \(league.rankBy), \(league.benchmark),
                        \(league.deleteManagedAfterDays.map(Int32.init)), \(league.teams), \(LeagueRulesColumns.values(league.rules)))
                RETURNING \(unescaped: Self.columns)
            ), seated AS (
                SELECT * FROM league WHERE owner_plays
            ), member AS (
                INSERT INTO league_members (league_id, user_id) SELECT id, owner_id FROM seated
            ), \(Self.fundIsolated(from: "seated", userID: "owner_id"))
            SELECT * FROM league
            """
        )
        return try record(rows[0])
    }

    /// For an isolated league, a league portfolio with the starting cash (in the league's
    /// currency) as a cash movement: `source` names the statement's league row and `userID` the member (a
    /// column of it, or a value). A member of a team league gets none (their team's is
    /// theirs); a team's account gets one only there (`team`).
    static func fundIsolated(from source: String, userID: PostgresQuery, team: Bool = false) -> PostgresQuery {
        """
        portfolio AS (
            INSERT INTO portfolios (user_id, league_id, kind, name, cash, cash_currency, base_currency, may_borrow)
            SELECT \(userID), id, \(PortfolioKind.league), name, starting_cash, currency, currency, margin_percent IS NOT NULL
            FROM \(unescaped: source)
            WHERE mode = \(LeagueMode.isolated) AND teams = \(team)
            RETURNING id, cash
        ), funding AS (
            INSERT INTO cash_movements (portfolio_id, kind, amount, note)
            SELECT id, \(CashMovementKind.startingCash), cash, 'League starting cash' FROM portfolio
        )
        """
    }

    /// Why accounts could not be seated by the host.
    enum SeatRefusal: Error, Sendable {
        case ended, full
    }

    /// Seats accounts the host created (a class roster) in one statement, inside the
    /// caller's transaction: the seats are counted on the league row, so a cap is never
    /// passed, and in an isolated league each gets a league portfolio with the starting
    /// cash. The late-join window is the players', not the host's.
    static func seat(_ userIDs: [Int], leagueID: Int, in session: PostgresSession) async throws {
        let seated = try await session.query(
            """
            WITH seat AS (
                UPDATE leagues l SET member_count = l.member_count + \(Int32(userIDs.count))
                WHERE l.id = \(leagueID) AND NOT league_ended(l, now())
                  AND (l.max_members IS NULL OR l.member_count + \(Int32(userIDs.count)) <= l.max_members)
                RETURNING l.*
            ), seats AS (
                SELECT seat.*, seated.user_id FROM seat, unnest(\(userIDs)::int8[]) AS seated (user_id)
            ), member AS (
                INSERT INTO league_members (league_id, user_id) SELECT id, user_id FROM seats
            ), \(Self.fundIsolated(from: "seats", userID: "user_id"))
            SELECT count(*) FROM seat
            """
        ).decodeColumn(Int.self)
        guard seated == [1] else {
            let ended = try await session.query("SELECT league_ended(l, now()) FROM leagues l WHERE id = \(leagueID)").decodeColumn(Bool.self)
            throw ended == [false] ? SeatRefusal.full : SeatRefusal.ended
        }
    }

    /// Joins in one statement. The seat is taken by a conditional update of the league
    /// row, so concurrent joins never pass `max_members`.
    func join(code: String, userID: Int) async throws -> (JoinOutcome, LeagueRecord?) {
        do {
            let rows = try await pool.query(
                """
                WITH league AS (
                    -- The code as typed (an older mixed-case code), else in capitals (any newer one).
                    SELECT * FROM leagues WHERE code = \(code) OR code = \(code.uppercased())
                    ORDER BY code = \(code) DESC LIMIT 1
                ),
                barred AS (SELECT 1 FROM league_bans b JOIN league ON b.league_id = league.id WHERE b.user_id = \(userID)),
                joiner_is_bot AS (SELECT 1 FROM users WHERE id = \(userID) AND bot_owner_id IS NOT NULL),
                no_bots AS (
                    SELECT 1 FROM league WHERE bots = \(BotPolicy.forbidden) AND EXISTS (SELECT 1 FROM joiner_is_bot)
                ),
                -- A member already, or the host (who plays from the start or not at all).
                existing AS (
                    SELECT 1 FROM league_members m JOIN league ON m.league_id = league.id WHERE m.user_id = \(userID)
                    UNION ALL SELECT 1 FROM league WHERE owner_id = \(userID)
                ),
                seat AS (
                    UPDATE leagues l SET member_count = l.member_count + 1
                    FROM league
                    WHERE l.id = league.id AND NOT EXISTS (SELECT 1 FROM barred) AND NOT EXISTS (SELECT 1 FROM existing)
                      -- The policy read again on the locked row: a bot's join racing a
                      -- change to forbidding bots does not take a seat.
                      AND NOT (l.bots = \(BotPolicy.forbidden) AND EXISTS (SELECT 1 FROM joiner_is_bot))
                      AND league_joinable(l, now())
                      AND (l.max_members IS NULL OR l.member_count < l.max_members)
                    RETURNING l.*
                ), member AS (
                    INSERT INTO league_members (league_id, user_id) SELECT id, \(userID) FROM seat
                ), \(Self.fundIsolated(from: "seat", userID: "\(userID)::int8"))
                SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM league) THEN \(JoinOutcome.notFound)
                            WHEN EXISTS (SELECT 1 FROM barred) THEN \(JoinOutcome.banned)
                            WHEN EXISTS (SELECT 1 FROM no_bots) THEN \(JoinOutcome.botsForbidden)
                            WHEN EXISTS (SELECT 1 FROM existing) THEN \(JoinOutcome.alreadyMember)
                            WHEN EXISTS (SELECT 1 FROM seat) THEN \(JoinOutcome.ok)
                            WHEN (SELECT league_ended(l, now()) FROM leagues l JOIN league ON l.id = league.id) THEN \(JoinOutcome.ended)
                            WHEN (SELECT join_until <= now() FROM league) THEN \(JoinOutcome.joinClosed)
                            -- A bot refused a seat with room left: the league came to forbid bots.
                            WHEN EXISTS (SELECT 1 FROM joiner_is_bot)
                                 AND (SELECT max_members IS NULL OR member_count < max_members FROM league)
                                THEN \(JoinOutcome.botsForbidden)
                            ELSE \(JoinOutcome.full) END::text,
                       (SELECT id FROM league)
                """
            )
            let (outcome, id) = try rows[0].decode((JoinOutcome, Int?).self)
            var record: LeagueRecord?
            if let id { record = try await league(id: id) }
            return (outcome, record)
        } catch let error as PostgresError where error.code == .uniqueViolation {
            // The same user joining twice at once: the second finds the first's membership.
            return (.alreadyMember, nil)
        }
    }

    /// Applies the owner's changes to a running league in one update; nil when it has
    /// finished. A cap below the members seated is refused by the league row's check, so
    /// a join racing the change cannot slip past it. A change to forbidding bots cancels,
    /// in the same transaction, the open orders API keys placed on the league's portfolios.
    func update(leagueID: Int, _ changes: Changes, audit: AuditEntry) async throws -> LeagueRecord? {
        do {
            return try await pool.withTransaction { session in
                let updated = try await session.query(
                    """
                    UPDATE leagues SET
                        name = coalesce(\(changes.name), name),
                        bots = coalesce(\(changes.bots), bots),
                        journal_required = coalesce(\(changes.journalRequired), journal_required),
                        rank_by = coalesce(\(changes.rankBy), rank_by),
                        benchmark = coalesce(\(changes.benchmark), benchmark),
                        risk_computed_at = CASE WHEN \(changes.benchmark)::text IS DISTINCT FROM benchmark
                                                     AND \(changes.benchmark)::text IS NOT NULL THEN NULL ELSE risk_computed_at END,
                        ends_at = CASE WHEN \(changes.endsAt.named) THEN \(changes.endsAt.value) ELSE ends_at END,
                        join_until = CASE WHEN \(changes.joinUntil.named) THEN \(changes.joinUntil.value) ELSE join_until END,
                        max_members = CASE WHEN \(changes.maxMembers.named) THEN \(changes.maxMembers.value.map(Int32.init))
                                           ELSE max_members END,
                        delete_managed_after_days = CASE WHEN \(changes.deleteManagedAfterDays.named)
                                                         THEN \(changes.deleteManagedAfterDays.value.map(Int32.init))
                                                         ELSE delete_managed_after_days END
                    WHERE id = \(leagueID) AND NOT league_finished(leagues)
                    RETURNING \(unescaped: Self.columns)
                    """
                ).first.map(record)
                guard updated != nil else { return nil }
                if changes.bots == .forbidden {
                    try await session.execute(
                        OrderStore.closing(.placedByForbiddenKeys(leagueID: leagueID), as: .canceled, reason: OrderStore.botsForbiddenReason)
                    )
                }
                try await AuditStore.record(audit, in: session)
                return updated
            }
        } catch let error as PostgresError where error.code == .checkViolation && error.constraint == "leagues_member_count_check" {
            throw InvalidInput("maxMembers must be at least the number of members seated.")
        }
    }

    /// Freezes trading in a running league, with the reason members are told, or unfreezes
    /// it. Only a change is applied (a conditional update), and members are told in the
    /// same transaction, so a repeated or concurrent call, from any server process, tells
    /// them once. Nil when the league has finished. The host's call is in the audit log
    /// whether it changed anything or not.
    func setFrozen(_ frozen: Bool, reason: String?, leagueID: Int, audit: AuditEntry) async throws -> LeagueRecord? {
        try await pool.withTransaction { session in
            let changed = try await session.query(
                """
                UPDATE leagues SET frozen_at = CASE WHEN \(frozen) THEN now() END,
                                   frozen_reason = CASE WHEN \(frozen) THEN \(reason)::text END
                WHERE id = \(leagueID) AND NOT league_finished(leagues) AND league_frozen(leagues) <> \(frozen)
                RETURNING \(unescaped: Self.columns)
                """
            ).first.map(record)
            guard let changed else {
                let unchanged = try await session.query(
                    "SELECT \(unescaped: Self.columns) FROM leagues WHERE id = \(leagueID) AND NOT league_finished(leagues)"
                ).first.map(record)
                if unchanged != nil { try await AuditStore.record(audit, in: session) }
                return unchanged
            }
            try await AuditStore.record(audit, in: session)
            let (title, body) = frozen
                ? ("Trading frozen", "The host of \"\(changed.name)\" froze trading\(reason.map { ": \($0)" } ?? ""). "
                    + "Open orders wait until trading resumes; you can still cancel them.")
                : ("Trading resumed", "Trading in \"\(changed.name)\" is open again.")
            try await session.execute("SELECT notify_members(\(leagueID), \(title), \(body))")
            return changed
        }
    }

    /// A reset done: the member, their new league portfolio, the one archived, and how
    /// many times theirs has been reset.
    struct Reset: Sendable {
        let userID: Int
        let portfolioID: Int
        let previousPortfolioID: Int?
        let resets: Int
    }

    enum ResetOutcome: Sendable {
        case reset(Reset)
        case notMember, sharedLeague, ended, noResetsLeft, teamLeague
    }

    /// Resets a member's league portfolio in one transaction: its open orders are
    /// cancelled, it is archived with its history, a new one is funded with the starting
    /// cash (API keys on the old one move to it), the member's reset count goes up and they
    /// are told. The member's seat is locked first, so resets of one member run one after
    /// another and a member's own resets never pass `resets_allowed`. `own`: the member
    /// resets their own (counted against the allowance); otherwise the host does (counted
    /// in `resets`, which every reset raises, but not against the allowance).
    func reset(leagueID: Int, userID: Int, own: Bool, audit: AuditEntry? = nil) async throws -> ResetOutcome {
        try await pool.withTransaction { session in
            let seat = try await session.query(
                """
                SELECT m.own_resets, l.resets_allowed, l.mode, league_ended(l, now()), l.name, l.teams
                FROM league_members m JOIN leagues l ON l.id = m.league_id
                WHERE m.league_id = \(leagueID) AND m.user_id = \(userID)
                FOR UPDATE OF m
                """
            ).first
            guard let seat else { return .notMember }
            let (ownResets, allowed, mode, ended, name, teams) = try seat.decode((Int, Int, LeagueMode, Bool, String, Bool).self)
            guard mode == .isolated else { return .sharedLeague }
            guard !teams else { return .teamLeague }
            guard !ended else { return .ended }
            guard !own || ownResets < allowed else { return .noResetsLeft }
            let previous = try await session.query(
                "SELECT id FROM portfolios WHERE league_id = \(leagueID) AND user_id = \(userID) AND archived_at IS NULL"
            ).first?.decode(Int.self)
            if let previous {
                // Its open orders are cancelled (waiting for any being filled), then it is
                // archived, which waits for an order being placed on it to commit; none can be
                // placed after. Orders placed meanwhile are cancelled by a second pass that skips
                // any being filled right now: waiting for one while holding the portfolio would
                // deadlock with its fill (which locks the order, then the portfolio); that fill
                // finds the portfolio archived, and the order is closed then.
                let reason = "The league portfolio was reset."
                _ = try await session.query(OrderStore.closing(.portfolio(id: previous), as: .canceled, reason: reason))
                try await session.execute("UPDATE portfolios SET archived_at = now() WHERE id = \(previous)")
                _ = try await session.query(OrderStore.closing(.ofArchived(portfolioID: previous), as: .canceled, reason: reason))
            }
            let portfolioID = try await session.query(
                """
                WITH league AS (SELECT * FROM leagues WHERE id = \(leagueID)), \(Self.fundIsolated(from: "league", userID: "\(userID)::int8"))
                SELECT id FROM portfolio
                """
            ).decodeColumn(Int.self)[0]
            if let previous {
                try await session.execute("UPDATE api_keys SET portfolio_id = \(portfolioID) WHERE portfolio_id = \(previous)")
            }
            let count = try await session.query(
                """
                UPDATE league_members SET resets = resets + 1, own_resets = own_resets + \(own ? 1 : 0)
                WHERE league_id = \(leagueID) AND user_id = \(userID)
                RETURNING resets
                """
            ).decodeColumn(Int.self)[0]
            let body = own
                ? "You reset your portfolio in \"\(name)\": it starts again with the league's starting cash (\(allowed - ownResets - 1) of \(allowed) resets left)."
                : "The host of \"\(name)\" reset your league portfolio: it starts again with the league's starting cash."
            try await session.execute(
                "SELECT notify(\(userID), 'League portfolio reset', \(body + " The old one and its history are kept; its open orders were cancelled."))"
            )
            if let audit { try await AuditStore.record(audit, in: session) }
            return .reset(Reset(userID: userID, portfolioID: portfolioID, previousPortfolioID: previous, resets: count))
        }
    }

    func league(id: Int) async throws -> LeagueRecord? {
        try await pool.query("SELECT \(unescaped: Self.columns) FROM leagues WHERE id = \(id)").first.map(record)
    }

    /// The league if `userID` is a member of it or its host.
    func league(id: Int, member userID: Int) async throws -> LeagueRecord? {
        try await pool.query(
            """
            SELECT \(unescaped: Self.columns) FROM leagues
            WHERE id = \(id)
              AND (owner_id = \(userID) OR EXISTS (SELECT 1 FROM league_members m WHERE m.league_id = \(id) AND m.user_id = \(userID)))
            """
        ).first.map(record)
    }

    /// Which of `userIDs` are members of the league or its host.
    func members(of leagueID: Int, among userIDs: [Int]) async throws -> Set<Int> {
        Set(try await pool.query(
            """
            SELECT user_id FROM league_members WHERE league_id = \(leagueID) AND user_id = ANY(\(userIDs))
            UNION SELECT owner_id FROM leagues WHERE id = \(leagueID) AND owner_id = ANY(\(userIDs))
            """
        ).decodeColumn(Int.self))
    }

    /// The leagues `userID` plays in or hosts.
    func leagues(member userID: Int) async throws -> [LeagueRecord] {
        try await pool.query(
            """
            SELECT \(unescaped: Self.columns) FROM leagues
            WHERE id IN (SELECT league_id FROM league_members WHERE user_id = \(userID)
                         UNION ALL SELECT id FROM leagues WHERE owner_id = \(userID))
            ORDER BY created_at DESC, id DESC
            """
        ).map(record)
    }

    /// Gives up the seats of `userIDs` (in one league, or in every league), in the caller's
    /// transaction: the memberships and team places go and each league's member count
    /// drops by the seats it lost. Returns how many seats were given up.
    static func giveUpSeats(_ userIDs: [Int], inLeague leagueID: Int? = nil, in session: PostgresSession) async throws -> Int {
        try await session.query(
            """
            WITH gone AS (
                DELETE FROM league_members WHERE user_id = ANY(\(userIDs)) AND (\(leagueID)::int8 IS NULL OR league_id = \(leagueID)::int8)
                RETURNING league_id, user_id
            ), counted AS (
                UPDATE leagues l SET member_count = l.member_count - seats.n
                FROM (SELECT league_id, count(*)::int AS n FROM gone GROUP BY league_id) seats
                WHERE l.id = seats.league_id
            ), unteamed AS (
                DELETE FROM team_members t USING gone WHERE t.league_id = gone.league_id AND t.user_id = gone.user_id
            )
            SELECT count(*) FROM gone
            """
        ).decodeColumn(Int.self).first ?? 0
    }

    /// Removes a member (and bans them when kicked); their league portfolio is archived.
    /// Returns false when they were not a member.
    func removeMember(leagueID: Int, userID: Int, ban: Bool, audit: AuditEntry? = nil) async throws -> Bool {
        try await pool.withTransaction { session in
            guard try await Self.giveUpSeats([userID], inLeague: leagueID, in: session) == 1 else { return false }
            try await session.execute(
                """
                UPDATE portfolios SET archived_at = now()
                WHERE league_id = \(leagueID) AND user_id = \(userID) AND archived_at IS NULL
                """
            )
            if ban {
                try await session.execute(
                    "INSERT INTO league_bans (league_id, user_id) VALUES (\(leagueID), \(userID)) ON CONFLICT DO NOTHING"
                )
                try await session.execute(
                    """
                    SELECT notify(\(userID), 'Removed from a league',
                                  'The owner of "' || name || '" removed you from the league; you cannot rejoin it.')
                    FROM leagues WHERE id = \(leagueID)
                    """
                )
            }
            if let audit { try await AuditStore.record(audit, in: session) }
            return true
        }
    }

    /// Deletes the league; its members' portfolios are archived, keeping their history
    /// (its teams' go with their accounts).
    func delete(leagueID: Int, audit: AuditEntry) async throws {
        try await pool.withTransaction { session in
            try await Self.delete(leagueID: leagueID, in: session)
            try await AuditStore.record(audit, in: session)
        }
    }

    /// The same within a transaction (an owner's account erased deletes their leagues).
    static func delete(leagueID: Int, in session: PostgresSession) async throws {
        try await PersonalDataStore.deleteTeamAccounts(leagueID: leagueID, in: session)
        try await session.execute("UPDATE portfolios SET archived_at = now() WHERE league_id = \(leagueID) AND archived_at IS NULL")
        try await session.execute("DELETE FROM leagues WHERE id = \(leagueID)")
        try await session.execute("DELETE FROM league_standings WHERE league_id = \(leagueID)")
        try await StandingsStore.dropLiveSnapshot(leagueID, in: session)
    }

    /// Each member's trades, journal notes and last trade since their portfolio plays in the
    /// league (`league_portfolios.since`), for the gradebook (`Gradebook`): counted by who
    /// placed them, so a team's members are counted apart.
    func activity(of league: LeagueRecord) async throws -> [Int: Gradebook.Activity] {
        let rows = try await pool.query(
            """
            WITH lp AS (SELECT * FROM league_portfolios(\(league.id))),
            traded AS (
                SELECT coalesce(t.placed_by, lp.user_id) AS user_id, count(*) AS trades, max(t.created_at) AS last
                FROM lp JOIN trades t ON t.portfolio_id = lp.portfolio_id AND t.created_at >= lp.since
                GROUP BY 1
            ), noted AS (
                SELECT coalesce(o.placed_by, lp.user_id) AS user_id, count(*) AS notes
                FROM lp JOIN orders o ON o.portfolio_id = lp.portfolio_id AND o.note IS NOT NULL AND o.created_at >= lp.since
                GROUP BY 1
            )
            SELECT user_id, coalesce(traded.trades, 0), coalesce(noted.notes, 0), traded.last
            FROM traded FULL JOIN noted USING (user_id)
            """
        ).decode((Int, Int, Int, Date?).self)
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, Gradebook.Activity(trades: $0.1, notes: $0.2, lastTradeAt: $0.3)) })
    }

    /// A team league's members, each with their team and role (nil: on none), by username.
    func teamSeats(leagueID: Int) async throws -> [TeamSeat] {
        try await pool.query(
            """
            SELECT u.id, u.username, u.display_name, t.team_id, t.role FROM league_members m JOIN users u ON u.id = m.user_id
            LEFT JOIN team_members t ON t.league_id = m.league_id AND t.user_id = m.user_id
            WHERE m.league_id = \(leagueID) ORDER BY lower(u.username), u.id
            """
        ).decode((Int, String, String?, Int?, String?).self).map {
            TeamSeat(userID: $0.0, username: $0.1, displayName: $0.2, teamID: $0.3, role: $0.4)
        }
    }

    /// A member of a team league and their team (nil: on none).
    struct TeamSeat: Sendable {
        let userID: Int
        let username: String
        let displayName: String?
        let teamID: Int?
        let role: String?
    }

    private func record(_ row: PostgresRow) throws -> LeagueRecord {
        LeagueRecord(
            id: try row.decode(Int.self, column: "id"), name: try row.decode(String.self, column: "name"),
            code: try row.decode(String.self, column: "code"), ownerID: try row.decode(Int.self, column: "owner_id"),
            mode: try row.decode(LeagueMode.self, column: "mode"), startingCash: try row.decode(Decimal.self, column: "starting_cash"),
            startsAt: try row.decode(Date.self, column: "starts_at"), endsAt: try row.decode(Date?.self, column: "ends_at"),
            maxMembers: try row.decode(Int?.self, column: "max_members"), memberCount: try row.decode(Int.self, column: "member_count"),
            createdAt: try row.decode(Date.self, column: "created_at"), finishedAt: try row.decode(Date?.self, column: "finished_at"),
            rules: try LeagueRulesColumns.rules(row, over: serverRules), bots: try row.decode(BotPolicy.self, column: "bots"),
            joinUntil: try row.decode(Date?.self, column: "join_until"), ownerPlays: try row.decode(Bool.self, column: "owner_plays"),
            frozenAt: try row.decode(Date?.self, column: "frozen_at"), frozenReason: try row.decode(String?.self, column: "frozen_reason"),
            resetsAllowed: try row.decode(Int.self, column: "resets_allowed"),
            journalRequired: try row.decode(Bool.self, column: "journal_required"),
            rankBy: try row.decode(RankBy.self, column: "rank_by"), benchmark: try row.decode(String.self, column: "benchmark"),
            deleteManagedAfterDays: try row.decode(Int?.self, column: "delete_managed_after_days"),
            teams: try row.decode(Bool.self, column: "teams"),
            market: try LeagueMarketStore.summary(row)
        )
    }
}

/// Join codes a class can type: 12 upper-case letters and digits without look-alikes
/// (no 0/O, 1/I/L), 31 symbols, so about 59 bits from the system's cryptographic
/// generator; a join accepts any case. Leagues made before kept their mixed-case codes,
/// which still join as they are.
enum JoinCode {
    static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<12).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
