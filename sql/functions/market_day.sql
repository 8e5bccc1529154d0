-- The market's day of a moment: its calendar day in the market's time zone (p_zone, the
-- server's one setting, MarketClock.zone: New York for the `nyse` schedule, UTC for
-- `always`). The one SQL form of "which trading day a moment belongs to"; its inverse is
-- market_day_start. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION market_day(p_at timestamptz, p_zone text) RETURNS date
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p_at AT TIME ZONE p_zone)::date
$$;
