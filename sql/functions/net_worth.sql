-- A portfolio's net worth: its cash plus what its holdings are worth (p_holdings, the sum
-- of its rows of holding_values now, or of a past day's valued positions, positions_at;
-- NULL when it holds nothing), in the portfolio's currency. The one rule of net worth:
-- the standings, the portfolio the server shows, its value history and composition, the
-- position limit, a short's margin and the achievements read it. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION net_worth(p_cash numeric, p_holdings numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_cash + coalesce(p_holdings, 0)
$$;
