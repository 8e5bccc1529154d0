-- The stored symbol of `p_symbol` in the market of scenario league p_league: SYMBOL@LEAGUE
-- (sql/migrations/0058_scenario_leagues.sql). The SQL form of Symbol.stored, for the
-- statement that makes a league's instruments (LeagueMarketStore.open). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION symbol_in_league(p_symbol text, p_league bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_symbol || '@' || p_league
$$;
