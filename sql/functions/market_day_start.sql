-- The moment a market day starts: midnight of p_day in the market's time zone (p_zone,
-- MarketClock.zone). A day's moments are [market_day_start(d), market_day_start(d + 1)).
-- The inverse of market_day. Plain SQL, inlined.
CREATE OR REPLACE FUNCTION market_day_start(p_day date, p_zone text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_day::timestamp AT TIME ZONE p_zone
$$;
