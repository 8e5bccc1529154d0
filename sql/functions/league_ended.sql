-- Whether a league's run is over at p_at: its end has passed, or it has been finished
-- (league_finished). The one rule of "ended" wherever a league is asked whether it still
-- runs (league_running), takes members (league_joinable, the join statement's answer),
-- may reset a portfolio (LeagueStore.reset) or still forbids API keys
-- (api_keys_forbidden_portfolios). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_ended(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT coalesce(p_league.ends_at <= p_at, false) OR league_finished(p_league)
$$;
