-- Units of each of p_currencies per euro now: its rate here set at or after p_live_since,
-- else its latest reference rate by p_day (NULL: the latest there is), dated that day's
-- 16:00 in Frankfurt, when the ECB publishes. A p_live_since of 'infinity' reads the
-- reference rates alone (a replayed day). Currencies without either are left out (the
-- euro is not asked: it is 1).
CREATE OR REPLACE FUNCTION fx_now(p_currencies text[], p_day date, p_live_since timestamptz)
RETURNS TABLE (currency text, per_euro numeric, as_of timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT c.code, coalesce(q.per_euro, r.per_euro), coalesce(q.as_of, r.as_of)
    FROM unnest(p_currencies) AS c (code)
    LEFT JOIN fx_quotes q ON q.currency = c.code AND q.as_of >= p_live_since
    LEFT JOIN LATERAL (SELECT x.per_euro, (x.day + time '16:00') AT TIME ZONE 'Europe/Berlin' AS as_of
                       FROM fx_rates x WHERE x.currency = c.code AND x.day <= coalesce(p_day, 'infinity')
                       ORDER BY x.day DESC LIMIT 1) r ON true
    WHERE coalesce(q.per_euro, r.per_euro) IS NOT NULL
$$;
