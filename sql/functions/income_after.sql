-- The income (dividends, cash in lieu) a portfolio's cash holds from after p_at: money
-- an entry dated p_at cannot spend, as it was not there yet.
CREATE OR REPLACE FUNCTION income_after(p_portfolio bigint, p_at timestamptz) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(amount), 0) FROM cash_movements
    WHERE portfolio_id = p_portfolio AND kind IN ('dividend', 'cash_in_lieu') AND created_at > p_at
$$;
