-- A moment as JSON and cursors write it: ISO 8601 in UTC with p_digits (0, 3 or 6) digits
-- of a second, e.g. 2026-03-02T14:30:00.123456Z. The one SQL formatter of moments.
-- Plain SQL, inlined (a constant p_digits folds the CASE away).
CREATE OR REPLACE FUNCTION utc_text(p_at timestamptz, p_digits int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', CASE p_digits WHEN 0 THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"'
                                                          WHEN 3 THEN 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'
                                                          ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END)
$$;
