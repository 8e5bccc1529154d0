-- Whether a league is open for trading at p_at: started, not ended (league_ended), and
-- not frozen by its host. The one rule wherever a league portfolio trades or says whether
-- it may (trades, orders, /v2 accounts); a portfolio without a league is always open. Where
-- a refusal is told, a frozen league's is `trading_frozen` (`frozen_at` set). Plain SQL,
-- inlined: the planner reads the league's columns directly.
CREATE OR REPLACE FUNCTION league_open(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_league.id IS NULL
        OR (p_at >= p_league.starts_at AND NOT league_ended(p_league, p_at) AND p_league.frozen_at IS NULL)
$$;
