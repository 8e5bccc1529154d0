import Postgres

/// Whose portfolios a player trades and sees: their own, and a team's league portfolio
/// for its members — traders trade it, viewers only see it. A request's portfolio is
/// looked up as the player's own first, with the plain `holder = player` every statement
/// has always had, so a player's own portfolios cost nothing more; only when that finds
/// nothing does `seat` ask whether it is a team's the player is on, and the read or write
/// runs once more as the team's account (the portfolio's holder). Listing every portfolio
/// a player sees asks `viewing_accounts`; looking up a placer's orders across portfolios,
/// `trading_accounts`.
enum PortfolioAccess {
    /// A team's portfolio a player is on: the team's account and whether they trade it.
    struct Seat: Sendable {
        let account: Int
        let trader: Bool
    }

    /// The team seat, if any, of `userID` on the portfolio.
    static func seat(userID: Int, portfolioID: Int, run: (PostgresQuery) async throws -> PostgresRows) async throws -> Seat? {
        try await run(
            """
            SELECT v.user_id, m.role = 'trader'
            FROM portfolios v JOIN teams t ON t.account_id = v.user_id
                 JOIN team_members m ON m.team_id = t.id AND m.user_id = \(userID)
            WHERE v.id = \(portfolioID) AND v.archived_at IS NULL
            """
        ).decode((Int, Bool).self).first.map { Seat(account: $0.0, trader: $0.1) }
    }

    /// Runs `lookup` as the player; when it finds nothing for a named portfolio that is a
    /// team's they are on (a trader's, with `trading`), once more as the team's account.
    static func resolving<T>(
        userID: Int, portfolioID: Int?, trading: Bool = false, run: (PostgresQuery) async throws -> PostgresRows,
        _ lookup: (_ holder: Int) async throws -> T?
    ) async throws -> T? {
        if let found = try await lookup(userID) { return found }
        guard let portfolioID, let seat = try await seat(userID: userID, portfolioID: portfolioID, run: run), seat.trader || !trading else {
            return nil
        }
        return try await lookup(seat.account)
    }

    /// Every portfolio the player sees, as a condition on the holder column (listing).
    static func listed(_ holder: String, userID: Int) -> PostgresQuery {
        "\(unescaped: holder) = ANY(viewing_accounts(\(userID)))"
    }

    /// Every portfolio the player trades, as a condition on the holder column.
    static func traded(_ holder: String, userID: Int) -> PostgresQuery {
        "\(unescaped: holder) = ANY(trading_accounts(\(userID)))"
    }
}
