-- Whether a league forbids API keys on a portfolio (api_keys_forbidden_portfolios, which
-- holds the rule), for a key as it is made and used; inlined, the portfolio's id narrows
-- each branch of the set to an index probe.
CREATE OR REPLACE FUNCTION api_keys_forbidden(p_portfolio bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM api_keys_forbidden_portfolios() f WHERE f.portfolio_id = p_portfolio)
$$;
