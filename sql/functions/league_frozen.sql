-- Whether a league's host has frozen its trading (`frozen_at` set; the reason is told to
-- members once). The one reader of `frozen_at`: league_open, the matcher's waiting orders
-- and the host's freeze and unfreeze. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION league_frozen(p_league leagues) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_league.frozen_at IS NOT NULL
$$;
