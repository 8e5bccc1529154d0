-- Whether a league takes new members at p_at: it has not ended (league_ended) and its
-- late-join window, if any, is still open. The one rule of every join (LeagueStore.join);
-- a full league is the seat's own check. Plain SQL, inlined into the join statement.
CREATE OR REPLACE FUNCTION league_joinable(p_league leagues, p_at timestamptz) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT NOT league_ended(p_league, p_at) AND (p_league.join_until IS NULL OR p_at < p_league.join_until)
$$;
