-- Whether a league is open for trading at p_at: running (league_running) and not frozen
-- by its host. The one rule wherever a league portfolio trades or says whether it may
-- (trades, orders, /v2 accounts); a portfolio without a league is always open.
-- Where a refusal is told, a frozen league's is `trading_frozen` (league_frozen). Plain
-- SQL, inlined: the planner reads the league's columns directly.
CREATE OR REPLACE FUNCTION league_open(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_league.id IS NULL OR (league_running(p_league, p_at) AND NOT league_frozen(p_league))
$$;
