-- Whether an order's day has ended in a scenario league: a `day` order of a league's
-- instrument placed before the league's day now began (day_starts). The advance expires the
-- day orders it sees (league_market_advance); one whose placing was still committing then
-- is this: the matcher leaves it unfilled (OrderStore.fillable) and the sweep expires it
-- (OrderMatcher.sweep). The one rule of when a league's day order ends. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_day_ended(p_symbol text, p_time_in_force text, p_created timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_time_in_force = 'day' AND symbol_shown(p_symbol) <> p_symbol AND EXISTS (
        SELECT 1 FROM league_instruments li JOIN league_markets m ON m.league_id = li.league_id
        WHERE li.symbol = p_symbol AND p_created < m.day_starts[m.day])
$$;
