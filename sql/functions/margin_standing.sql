-- Where a portfolio stands against its league's maintenance margin now: its equity (net
-- worth), what maintenance requires (margin_needed: maintenance_percent % of its long and
-- short positions' value, 0 without the rule), and that value, longs and shorts apart. The one
-- reading of "below maintenance": a close's margin call (margin_close) and the forced
-- sales of a call not met (MarginCloses) both ask it.
CREATE OR REPLACE FUNCTION margin_standing(p_portfolio bigint, OUT equity numeric, OUT required numeric,
                                           OUT longs numeric, OUT shorts numeric, OUT below boolean)
LANGUAGE sql STABLE AS $$
    SELECT s.equity, n.maintenance, s.longs, s.shorts, l.maintenance_percent IS NOT NULL AND s.equity < n.maintenance
    FROM portfolios p
    LEFT JOIN leagues l ON l.id = p.league_id
    CROSS JOIN LATERAL (
        SELECT net_worth(p.cash, sum(v.value)) AS equity,
               coalesce(sum(v.value) FILTER (WHERE v.quantity > 0), 0) AS longs,
               coalesce(sum(-v.value) FILTER (WHERE v.quantity < 0), 0) AS shorts
        FROM holding_values v WHERE v.portfolio_id = p.id
    ) s
    CROSS JOIN LATERAL margin_needed(s.longs, s.shorts, l.margin_percent, l.short_margin_percent, l.maintenance_percent, s.equity) n
    WHERE p.id = p_portfolio
$$;
