-- Whether a portfolio (its kind and id) is the one a request names: the portfolio p_named,
-- or without one (NULL) the user's personal portfolio. The one rule behind every
-- "portfolioId, else the personal portfolio" (trades, orders, API keys, history); the
-- caller says whose portfolios are looked at. Plain SQL without a FROM, so the planner
-- inlines it.
CREATE OR REPLACE FUNCTION portfolio_named(p_kind text, p_id bigint, p_named bigint) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_named IS NULL THEN p_kind = 'personal' ELSE p_id = p_named END
$$;
