-- Whether a league's run is over at p_at: its end has passed, or it has been finished.
-- The one rule of "ended" wherever a league is asked whether it still trades
-- (league_open), takes members (league_joinable, the join statement's answer) or may
-- reset a portfolio (LeagueStore.reset). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_ended(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(p_league.ends_at <= p_at, false) OR p_league.finished_at IS NOT NULL
$$;
