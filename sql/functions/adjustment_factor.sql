-- The factor of adjusted history on one day: the prices of `p_day` times `factor` are
-- that day's adjusted prices (volume times `shares`), for the actions after it up to
-- p_through (see adjusted_bars for the modes). Figures needing a day or two of adjusted
-- history (a benchmark's total return over a range) read it without adjusting every bar
-- in between.
CREATE OR REPLACE FUNCTION adjustment_factor(p_symbol text, p_day date, p_through date, p_mode text)
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
