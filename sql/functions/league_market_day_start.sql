-- When league day p_day of a scenario league on a clock starts: starts_at + (p_day − 1) ×
-- day_minutes; NULL for a league its host advances. The inverse of league_market_day.
-- Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_market_day_start(p_market league_markets, p_league leagues, p_day integer) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT p_league.starts_at + make_interval(mins => p_market.day_minutes * (p_day - 1))
$$;
