-- The page position of an activity (the activities view) as clients send it back:
-- "time~source~id", the time to the microsecond. Read by GET /api/portfolios/{id}/activities
-- and /v2/account/activities alike (TradingStore, AlpacaStore). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION activity_cursor(p_at timestamptz, p_source int, p_id bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT utc_text(p_at, 6) || '~' || p_source || '~' || p_id
$$;
