-- Where a portfolio stands against its league's maintenance margin now: its equity (net
-- worth), what maintenance requires (maintenance_percent % of its long and short
-- positions' value, 0 without the rule), and that value, longs and shorts apart. The one
-- reading of "below maintenance": a close's margin call (margin_close) and the forced
-- sales of a call not met (MarginCloses) both ask it.
CREATE OR REPLACE FUNCTION margin_standing(p_portfolio bigint, OUT equity numeric, OUT required numeric,
                                           OUT longs numeric, OUT shorts numeric, OUT below boolean)
LANGUAGE sql STABLE AS $$
    SELECT s.equity, s.required, s.longs, s.shorts, l.maintenance_percent IS NOT NULL AND s.equity < s.required
    FROM portfolios p
    LEFT JOIN leagues l ON l.id = p.league_id
    CROSS JOIN LATERAL (
        SELECT net_worth(p.cash, sum(v.value)) AS equity,
               coalesce(l.maintenance_percent, 0) * coalesce(sum(abs(v.value)), 0) / 100 AS required,
               coalesce(sum(v.value) FILTER (WHERE v.quantity > 0), 0) AS longs,
               coalesce(sum(-v.value) FILTER (WHERE v.quantity < 0), 0) AS shorts
        FROM holding_values v WHERE v.portfolio_id = p.id
    ) s
    WHERE p.id = p_portfolio
$$;
