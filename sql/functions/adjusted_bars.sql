-- The one definition of adjusted history: a symbol's daily bars from p_from, adjusted for
-- the actions after each day up to p_through (the last day players may see; NULL for all)
-- by adjustment_factor. 'split' divides prices by the split ratios since (and multiplies
-- volume), so a chart has no cliff at a split; 'total' also scales by
-- (1 − dividend / previous close) for each later dividend, the total-return series;
-- 'none' is the raw bars.
CREATE OR REPLACE FUNCTION adjusted_bars(p_symbol text, p_from date, p_through date, p_mode text)
RETURNS TABLE (day date, open numeric, high numeric, low numeric, close numeric, volume bigint)
LANGUAGE sql STABLE AS $$
    SELECT b.day, round(b.open * f.factor, 4), round(b.high * f.factor, 4), round(b.low * f.factor, 4),
           round(b.close * f.factor, 4), round(b.volume * f.shares)::bigint
    FROM daily_bars b
    CROSS JOIN LATERAL adjustment_factor(p_symbol, b.day, p_through, p_mode) f
    WHERE b.symbol = p_symbol AND b.day >= p_from AND (p_through IS NULL OR b.day <= p_through)
$$;
