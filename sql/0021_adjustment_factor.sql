-- The factor of adjusted history on one day, taken out of adjusted_bars so that figures
-- needing a day or two of it (a benchmark's total return over a range) need not adjust
-- every bar in between: the prices of `p_day` times `factor` are that day's adjusted
-- prices (volume times `shares`), for the actions after it up to p_through. adjusted_bars
-- is the same as before, built on it.
CREATE FUNCTION adjustment_factor(p_symbol text, p_day date, p_through date, p_mode text)
RETURNS TABLE (factor numeric, shares numeric)
LANGUAGE sql STABLE AS $$
    WITH actions AS (
        SELECT a.kind, a.ratio,
               CASE WHEN a.kind = 'dividend' THEN 1 - a.amount / (
                   SELECT p.close FROM daily_bars p WHERE p.symbol = a.symbol AND p.day < a.ex_date
                   ORDER BY p.day DESC LIMIT 1) END AS kept
        FROM corporate_actions a
        WHERE p_mode IN ('split', 'total') AND a.symbol = p_symbol AND a.ex_date > p_day
          AND (p_through IS NULL OR a.ex_date <= p_through)
          AND (a.kind = 'split' OR p_mode = 'total')
    )
    SELECT coalesce(product(a.kept) FILTER (WHERE a.kind = 'dividend' AND a.kept > 0), 1)
               / coalesce(product(a.ratio) FILTER (WHERE a.kind = 'split'), 1),
           coalesce(product(a.ratio) FILTER (WHERE a.kind = 'split'), 1)
    FROM actions a
$$;

CREATE OR REPLACE FUNCTION adjusted_bars(p_symbol text, p_from date, p_through date, p_mode text)
RETURNS TABLE (day date, open numeric, high numeric, low numeric, close numeric, volume bigint)
LANGUAGE sql STABLE AS $$
    SELECT b.day, round(b.open * f.factor, 4), round(b.high * f.factor, 4), round(b.low * f.factor, 4),
           round(b.close * f.factor, 4), round(b.volume * f.shares)::bigint
    FROM daily_bars b
    CROSS JOIN LATERAL adjustment_factor(p_symbol, b.day, p_through, p_mode) f
    WHERE b.symbol = p_symbol AND b.day >= p_from AND (p_through IS NULL OR b.day <= p_through)
$$;
