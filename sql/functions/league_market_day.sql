-- The league day a scenario league's clock shows at p_at: with `day_minutes`, day 1 from
-- the league's start and one more every day_minutes minutes after it (the clock stops at
-- the league's end), up to the window's last day; without, the day its host advanced it
-- to. Day k starts at starts_at + (k − 1) × day_minutes. The one rule of the league's
-- clock: the chore that advances due leagues (LeagueMarketStore.due) and the next day's
-- time a league's market shows read it. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_market_day(p_market league_markets, p_league leagues, p_at timestamptz) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_market.day_minutes IS NULL THEN p_market.day
                ELSE least(cardinality(p_market.real_days), 1 + greatest(0, floor(extract(epoch FROM
                         least(p_at, coalesce(p_league.ends_at, p_at), coalesce(p_league.finished_at, p_at)) - p_league.starts_at
                     ) / 60 / p_market.day_minutes))::integer) END
$$;
