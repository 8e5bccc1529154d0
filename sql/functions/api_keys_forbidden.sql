-- Whether a league forbids API keys on a portfolio (api_keys_forbidden_portfolios, which
-- holds the rule), for a key as it is made. PostgreSQL never inlines a function whose
-- body is a subquery: each call plans it anew (~0.5 ms), so statements run for every
-- request (a key's lookup, a key's trade) probe the set themselves
-- (TradeStatement.keyForbidden), where the portfolio's id narrows each branch of the set
-- to an index probe.
CREATE OR REPLACE FUNCTION api_keys_forbidden(p_portfolio bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM api_keys_forbidden_portfolios() f WHERE f.portfolio_id = p_portfolio)
$$;
