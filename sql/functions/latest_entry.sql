-- The latest entry of a portfolio's history: its trades, deposits, withdrawals and
-- starting cash (income from splits and dividends follows by itself and does not count).
CREATE OR REPLACE FUNCTION latest_entry(p_portfolio bigint) RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT greatest(
        (SELECT max(created_at) FROM trades WHERE portfolio_id = p_portfolio),
        (SELECT max(created_at) FROM cash_movements WHERE portfolio_id = p_portfolio AND kind NOT IN ('dividend', 'cash_in_lieu')))
$$;
