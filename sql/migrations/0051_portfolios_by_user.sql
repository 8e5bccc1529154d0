-- A user's portfolios by user, whatever their kind. Every request that names "the user's
-- portfolio" (`WHERE user_id = $1 AND portfolio_named(kind, id, $2)`: a trade, an order,
-- /v2/account, a valuation) is a prepared statement, and PostgreSQL keeps its generic plan
-- only when that plan is no dearer than planning for the values. Without an index that
-- holds for any kind, the generic plan scans every portfolio (the partial indexes need
-- the kind known), so past a few thousand portfolios each execution was planned again —
-- the valuation's plan alone costs more than running it. The practice-only index is
-- covered by this one.
CREATE INDEX portfolios_user ON portfolios (user_id);
DROP INDEX portfolios_practice;
