-- What each position is worth now, in its portfolio's currency (price_in): negative for
-- a short; with the price before (the previous close), for the day's change. The one
-- valuation of holdings: standings, achievements, margin and position limits read it,
-- and so does the server for every portfolio it shows (TradingStore.valuations). A
-- reader that does not ask for previous_price does not compute it.
CREATE OR REPLACE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, l.price, h.quantity * l.price AS value,
       price_in(previous_close(h.symbol), h.cash_currency) AS previous_price
FROM holdings h
JOIN current_prices p ON p.symbol = h.symbol
CROSS JOIN LATERAL (SELECT price_in(p.price, h.cash_currency) AS price) l
WHERE h.quantity <> 0;
