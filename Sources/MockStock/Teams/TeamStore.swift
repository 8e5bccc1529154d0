import Foundation
import Postgres

/// Teams of a team league: each with its own account holding its one league portfolio,
/// and its members with their roles.
struct TeamStore: Sendable {
    let pool: PostgresConnectionPool

    /// Creates the team, its account (no password: no one logs in as it) and its league
    /// portfolio funded with the starting cash, in one transaction with its audit event.
    func create(leagueID: Int, name: String, audit: AuditEntry) async throws -> Team {
        do {
            return try await pool.withTransaction { session in
                let accountID = try await session.query(
                    """
                    INSERT INTO users (username, password_hash, role, display_name)
                    VALUES (\("team-" + GeneratedCredentials.random(12)), '', 'player', \(name)) RETURNING id
                    """
                ).decodeColumn(Int.self)[0]
                let teamID = try await session.query(
                    "INSERT INTO teams (league_id, name, account_id) VALUES (\(leagueID), \(name), \(accountID)) RETURNING id"
                ).decodeColumn(Int.self)[0]
                let funded = try await session.query(
                    """
                    WITH league AS (SELECT * FROM leagues WHERE id = \(leagueID)),
                    \(LeagueStore.fundIsolated(from: "league", userID: "\(accountID)::int8", team: true))
                    SELECT id FROM portfolio
                    """
                ).decodeColumn(Int.self)
                guard funded.count == 1 else { throw TeamError.notTeamLeague }
                // Achievements are a person's: the team's trades count towards none.
                try await session.execute("UPDATE portfolios SET trade_count_awards_due = false WHERE id = \(funded[0])")
                var audit = audit
                audit.details["teamId"] = .number(teamID)
                try await AuditStore.record(audit, in: session)
                return try await Self.team(teamID, in: session)!
            }
        } catch let error as PostgresError where error.code == .uniqueViolation && error.constraint == "teams_name_key" {
            throw TeamError.nameTaken
        }
    }

    /// Puts a league member on the team with the role (moving them from another team), with
    /// its audit event; nil when no such team in the league or the user is no member.
    func setMember(leagueID: Int, teamID: Int, userID: Int, role: TeamRole, audit: AuditEntry) async throws -> Team? {
        try await pool.withTransaction { session in
            let placed = try await session.execute(
                """
                INSERT INTO team_members (league_id, team_id, user_id, role)
                SELECT \(leagueID), t.id, m.user_id, \(role)
                FROM teams t JOIN league_members m ON m.league_id = t.league_id AND m.user_id = \(userID)
                WHERE t.id = \(teamID) AND t.league_id = \(leagueID)
                ON CONFLICT (league_id, user_id) DO UPDATE SET team_id = excluded.team_id, role = excluded.role
                """
            )
            guard placed == 1 else { return nil }
            try await AuditStore.record(audit, in: session)
            return try await Self.team(teamID, in: session)
        }
    }

    /// Takes a member off the team, with its audit event; nil when no such team, or the
    /// user is not on it.
    func removeMember(leagueID: Int, teamID: Int, userID: Int, audit: AuditEntry) async throws -> Team? {
        try await pool.withTransaction { session in
            guard try await session.execute(
                "DELETE FROM team_members WHERE league_id = \(leagueID) AND team_id = \(teamID) AND user_id = \(userID)"
            ) == 1 else { return nil }
            try await AuditStore.record(audit, in: session)
            return try await Self.team(teamID, in: session)
        }
    }

    /// The league's teams, by name.
    func teams(leagueID: Int) async throws -> [Team] {
        try await pool.withConnection { session in
            var teams: [Team] = []
            for id in try await session.query("SELECT id FROM teams WHERE league_id = \(leagueID) ORDER BY lower(name), id").decodeColumn(Int.self) {
                if let team = try await Self.team(id, in: session) { teams.append(team) }
            }
            return teams
        }
    }

    private static func team(_ id: Int, in session: PostgresSession) async throws -> Team? {
        guard let row = try await session.query(
            """
            SELECT t.id, t.name, p.id FROM teams t JOIN portfolios p ON p.user_id = t.account_id AND p.archived_at IS NULL
            WHERE t.id = \(id)
            """
        ).first else { return nil }
        let (teamID, name, portfolioID) = try row.decode((Int, String, Int).self)
        let members = try await session.query(
            """
            SELECT u.id, u.username, m.role FROM team_members m JOIN users u ON u.id = m.user_id
            WHERE m.team_id = \(id) ORDER BY m.role, lower(u.username)
            """
        ).decode((Int, String, TeamRole).self).map { Team.Member(userId: $0.0, username: $0.1, role: $0.2) }
        return Team(id: teamID, name: name, portfolioId: portfolioID, members: members)
    }
}
