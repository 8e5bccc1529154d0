-- Whether the day now of the scenario league whose instrument is p_symbol began after
-- p_moment (day_starts, the moment each of its days began); false for any other symbol.
-- The lookup half of league_day_ended, in a function of its own: a function holding a
-- sub-select is never inlined, and league_day_ended is, so that an order of the real
-- market (nearly every order a sweep or the matcher reads) costs two comparisons, never
-- this lookup.
CREATE OR REPLACE FUNCTION league_day_began_after(p_symbol text, p_moment timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM league_instruments li JOIN league_markets m ON m.league_id = li.league_id
        WHERE li.symbol = p_symbol AND p_moment < m.day_starts[m.day])
$$;
