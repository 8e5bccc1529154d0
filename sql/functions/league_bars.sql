-- A scenario league's prices: the daily bars of each of its instruments for league days
-- p_first to p_last (within its window), `day` being the league day. The one rule of a
-- league's prices, read wherever the league's market moves (league_market_advance) and by
-- nothing else: day k replays the real symbol's bar on the window's k-th trading day
-- (real_days[k]; its last bar before, without volume, where it has none that day), in
-- split-adjusted prices as of the window's last day (adjusted_bars), times the
-- instrument's base (100 over its day-1 close in a blind league) and times
-- (1 + change_percent/100) of every scripted event for it on or before day k; rounded to
-- the cent, and never below 0.01. The same window and events give the same prices.
CREATE OR REPLACE FUNCTION league_bars(p_league bigint, p_first integer, p_last integer)
RETURNS TABLE (symbol text, day integer, open numeric, high numeric, low numeric, close numeric, volume bigint)
LANGUAGE sql STABLE AS $$
    SELECT li.symbol, k.day,
           greatest(round(coalesce(b.open, b.close) * f.factor, 2), 0.01),
           greatest(round(coalesce(b.high, b.close) * f.factor, 2), 0.01),
           greatest(round(coalesce(b.low, b.close) * f.factor, 2), 0.01),
           greatest(round(b.close * f.factor, 2), 0.01),
           CASE WHEN b.day = m.real_days[k.day] THEN b.volume ELSE 0 END
    FROM league_markets m
    JOIN league_instruments li ON li.league_id = m.league_id
    CROSS JOIN generate_series(greatest(p_first, 1), least(p_last, cardinality(m.real_days))) AS k(day)
    CROSS JOIN LATERAL (
        SELECT a.day, a.open, a.high, a.low, a.close, a.volume
        FROM adjusted_bars(li.real_symbol, m.real_days[1], m.real_days[cardinality(m.real_days)], 'split') a
        WHERE a.day <= m.real_days[k.day]
        ORDER BY a.day DESC LIMIT 1
    ) b
    CROSS JOIN LATERAL (
        SELECT li.base * coalesce((
            SELECT product(1 + e.change_percent / 100) FROM league_events e
            WHERE e.league_id = m.league_id AND e.day <= k.day AND (e.symbols IS NULL OR li.symbol = ANY (e.symbols))
        ), 1) AS factor
    ) f
    WHERE m.league_id = p_league
$$;
