import Postgres

/// Whose portfolios a player trades and sees, as a condition on a portfolio's holder
/// column (`portfolios.user_id`, `orders.user_id`): their own, and a team's league
/// portfolio for its members — traders trade it, viewers only see it (SQL
/// `trading_accounts`, `viewing_accounts`). Without a portfolio named, a request means the
/// personal one, and no team is looked up.
enum PortfolioAccess {
    /// Stands for "any portfolio named" where no one id is: the teams are looked up.
    static let any = 0

    /// The portfolios `userID` trades.
    static func trades(_ holder: String, userID: Int, named portfolioID: Int?) -> PostgresQuery {
        portfolioID == nil ? "\(unescaped: holder) = \(userID)" : "\(unescaped: holder) = ANY(trading_accounts(\(userID)))"
    }

    /// The portfolios `userID` sees (`all`: listing every one of theirs).
    static func sees(_ holder: String, userID: Int, named portfolioID: Int?, all: Bool = false) -> PostgresQuery {
        portfolioID == nil && !all ? "\(unescaped: holder) = \(userID)" : "\(unescaped: holder) = ANY(viewing_accounts(\(userID)))"
    }
}
