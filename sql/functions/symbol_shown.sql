-- How an instrument is shown: its stored symbol without a scenario league's `@LEAGUE`
-- (sql/migrations/0058_scenario_leagues.sql). The SQL form of Symbol.shown, for the texts
-- written in SQL (notifications, exports). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION symbol_shown(p_symbol text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT split_part(p_symbol, '@', 1)
$$;
