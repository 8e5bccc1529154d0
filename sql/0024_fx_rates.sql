-- Daily exchange rates in the European Central Bank's form: units of a currency per one
-- euro on each business day it published (`mockstock seed --fx`, `POST /api/admin/fx`).
-- Any pair is derived through the euro, on the last day on or before the one asked for
-- that has both currencies: the one definition is fx_rate below.
CREATE TABLE fx_rates (
    currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'EUR'),
    day      date NOT NULL,
    per_euro numeric NOT NULL CHECK (per_euro > 0),
    PRIMARY KEY (currency, day)
);

-- Units of p_to per one p_from on p_day (the latest rates on or before it), and that day;
-- no row when either currency has no rate by then.
CREATE FUNCTION fx_rate(p_from text, p_to text, p_day date)
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
