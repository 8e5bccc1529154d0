-- The date of the scenario league day a moment belongs to (bar_days[k], k the last day
-- begun by p_at; day 1 for a moment before the league's first day began): a trade's or
-- cash movement's day in the league's own calendar. The one rule of "which league day a
-- moment belongs to": a league portfolio's value history (portfolio_at) reads it, for a
-- league's portfolio only. Plain SQL (its sub-select keeps it from being inlined).
CREATE OR REPLACE FUNCTION league_day_of(p_market league_markets, p_at timestamptz) RETURNS date
LANGUAGE sql STABLE AS $$
    SELECT p_market.bar_days[greatest(1, (SELECT count(*)::integer FROM unnest(p_market.day_starts) s WHERE s <= p_at))]
$$;
