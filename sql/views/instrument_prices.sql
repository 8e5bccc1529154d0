-- Each instrument with its current price and previous close (both from current_prices)
-- and the moment of that price: the quote's, else the day of the last close; and the
-- scenario league whose market it belongs to (null: the real market's).
CREATE OR REPLACE VIEW instrument_prices AS
SELECT i.symbol, i.name, i.description, i.sector, i.currency, i.active,
       cp.price, cp.previous_close,
       coalesce(q.as_of, (SELECT max(d.day) FROM daily_bars d WHERE d.symbol = i.symbol)::timestamptz) AS as_of,
       i.league_id
FROM instruments i
JOIN current_prices cp ON cp.symbol = i.symbol
LEFT JOIN quotes q ON q.symbol = i.symbol;
