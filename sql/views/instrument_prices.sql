-- Each instrument's current price with its previous close: the quote's, or else the
-- close before the last one. The price itself comes from current_prices.
CREATE OR REPLACE VIEW instrument_prices AS
SELECT i.symbol, i.name, i.description, i.sector, i.currency, i.active,
       cp.price,
       coalesce(q.previous_close, CASE WHEN q.symbol IS NULL THEN b.previous_close END) AS previous_close,
       coalesce(q.as_of, b.day::timestamptz) AS as_of
FROM instruments i
JOIN current_prices cp ON cp.symbol = i.symbol
LEFT JOIN quotes q ON q.symbol = i.symbol
LEFT JOIN LATERAL (
    SELECT (array_agg(last.close ORDER BY last.day DESC))[2] AS previous_close, max(last.day) AS day
    FROM (SELECT d.close, d.day FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 2) last
) b ON q.symbol IS NULL;
