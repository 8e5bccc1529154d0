-- Splits and dividends as events: read from the daily bars' `split` and `dividend`
-- columns when prices are seeded or uploaded, or entered by admins. Adjusted history is
-- computed from these rows (never from a vendor's adjusted close), so an admin's action
-- adjusts charts too.
CREATE TABLE corporate_actions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    symbol     text NOT NULL REFERENCES instruments (symbol) ON DELETE CASCADE,
    ex_date    date NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('split', 'dividend')),
    -- New shares per old share: 4 is a 4-for-1 split, 0.5 a 1-for-2 reverse split.
    ratio      numeric CHECK (ratio > 0 AND ratio <= 1000000),
    -- Cash per share.
    amount     numeric CHECK (amount >= 0 AND amount <= 1000000),
    source     text NOT NULL CHECK (source IN ('prices', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT corporate_actions_ratio_or_amount CHECK ((kind = 'split') = (ratio IS NOT NULL) AND (kind = 'dividend') = (amount IS NOT NULL)),
    -- One action of each kind per symbol and day: loading the same prices again adds nothing.
    CONSTRAINT corporate_actions_once UNIQUE (symbol, ex_date, kind)
);

INSERT INTO corporate_actions (symbol, ex_date, kind, ratio, source)
SELECT symbol, day, 'split', split, 'prices' FROM daily_bars WHERE split <> 1 ORDER BY symbol, day;
INSERT INTO corporate_actions (symbol, ex_date, kind, amount, source)
SELECT symbol, day, 'dividend', dividend, 'prices' FROM daily_bars WHERE dividend > 0 ORDER BY symbol, day;

CREATE AGGREGATE product (numeric) (SFUNC = numeric_mul, STYPE = numeric, INITCOND = '1');

-- The one definition of adjusted history: a symbol's daily bars from p_from, adjusted for
-- the actions after each day up to p_through (the last day players may see; NULL for all).
-- 'split' divides prices by the split ratios since (and multiplies volume), so a chart
-- has no cliff at a split; 'total' also scales by (1 − dividend / previous close) for each
-- later dividend, the total-return series; 'none' is the raw bars.
CREATE FUNCTION adjusted_bars(p_symbol text, p_from date, p_through date, p_mode text)
RETURNS TABLE (day date, open numeric, high numeric, low numeric, close numeric, volume bigint)
LANGUAGE sql STABLE AS $$
    WITH actions AS (
        SELECT a.ex_date, a.kind, a.ratio,
               CASE WHEN a.kind = 'dividend' THEN 1 - a.amount / (
                   SELECT p.close FROM daily_bars p WHERE p.symbol = a.symbol AND p.day < a.ex_date
                   ORDER BY p.day DESC LIMIT 1) END AS kept
        FROM corporate_actions a
        WHERE p_mode IN ('split', 'total') AND a.symbol = p_symbol AND a.ex_date > p_from
          AND (p_through IS NULL OR a.ex_date <= p_through)
          AND (a.kind = 'split' OR p_mode = 'total')
    )
    SELECT b.day, round(b.open * f.factor, 4), round(b.high * f.factor, 4), round(b.low * f.factor, 4),
           round(b.close * f.factor, 4), round(b.volume * f.shares)::bigint
    FROM daily_bars b
    CROSS JOIN LATERAL (
        SELECT coalesce(product(a.kept) FILTER (WHERE a.kind = 'dividend' AND a.kept > 0), 1)
                   / coalesce(product(a.ratio) FILTER (WHERE a.kind = 'split'), 1) AS factor,
               coalesce(product(a.ratio) FILTER (WHERE a.kind = 'split'), 1) AS shares
        FROM actions a WHERE a.ex_date > b.day
    ) f
    WHERE b.symbol = p_symbol AND b.day >= p_from AND (p_through IS NULL OR b.day <= p_through)
$$;
