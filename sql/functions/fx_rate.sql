-- Units of p_to per one p_from on p_day (the latest rates on or before it), and that day;
-- no row when either currency has no rate by then.
CREATE OR REPLACE FUNCTION fx_rate(p_from text, p_to text, p_day date)
RETURNS TABLE (rate numeric, day date)
LANGUAGE sql STABLE AS $$
    SELECT t.per_euro / f.per_euro, coalesce(least(f.day, t.day), p_day)
    FROM (SELECT 1::numeric AS per_euro, NULL::date AS day WHERE p_from = 'EUR'
          UNION ALL
          (SELECT r.per_euro, r.day FROM fx_rates r
           WHERE p_from <> 'EUR' AND r.currency = p_from AND r.day <= p_day ORDER BY r.day DESC LIMIT 1)) f,
         (SELECT 1::numeric AS per_euro, NULL::date AS day WHERE p_to = 'EUR'
          UNION ALL
          (SELECT r.per_euro, r.day FROM fx_rates r
           WHERE p_to <> 'EUR' AND r.currency = p_to AND r.day <= p_day ORDER BY r.day DESC LIMIT 1)) t
$$;
