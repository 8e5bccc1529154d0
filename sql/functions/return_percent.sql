-- A portfolio's return as the standings show it: net worth against the money paid in, in
-- percent to two places (0 before anything was paid in). The one rule the standings show
-- (Standing.returnPercent) and rank by (rankBy = return).
CREATE OR REPLACE FUNCTION return_percent(p_net_worth numeric, p_paid_in numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_paid_in > 0 THEN round((p_net_worth - p_paid_in) / p_paid_in * 100, 2) ELSE 0 END
$$;
