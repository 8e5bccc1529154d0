-- Whether an order's day has ended in a scenario league: a `day` order of a league's
-- instrument placed before the league's day now began (league_day_began_after). The
-- advance expires the day orders it sees (league_market_advance); one whose placing was
-- still committing then is this: the matcher leaves it unfilled (OrderStore.fillable) and
-- the sweep expires it (OrderMatcher.sweep). The one rule of when a league's day order
-- ends. Plain SQL without a sub-select, so inlined: the lookup runs only for a `day` order
-- of a league's instrument.
CREATE OR REPLACE FUNCTION league_day_ended(p_symbol text, p_time_in_force text, p_created timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_time_in_force = 'day' AND symbol_shown(p_symbol) <> p_symbol AND league_day_began_after(p_symbol, p_created)
$$;
