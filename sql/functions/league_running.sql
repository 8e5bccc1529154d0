-- Whether a league runs at p_at: it has started and not ended (league_ended). The one rule
-- of a running league: trading (league_open adds the host's freeze), the background risk
-- figures and the day's rank history. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_running(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_at >= p_league.starts_at AND NOT league_ended(p_league, p_at)
$$;
