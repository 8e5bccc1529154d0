-- What each position is worth now, in its portfolio's currency (a dollar price times the
-- rate now, fx_usd_to, to four decimals): negative for a short; with the price before
-- (the previous close, alike) and the day's change it makes (quantity × the price's move
-- since then; none without a previous close); with what a share cost on average
-- (the cost basis over the quantity, to four decimals). The one valuation of holdings:
-- standings, achievements, margin and position limits read it, and so does the server for
-- every portfolio it shows (TradingStore.valuations, AlpacaStore.account). A reader that
-- asks for neither previous_price nor day_change does not compute them; one that does reads it from current_prices, planned
-- with its own statement (a SQL function called per holding cost ~50 µs a call, more than
-- the rest of a 50-holding portfolio's valuation). The conversion is written out here rather than
-- called, so the planner keeps it inline (a league of 100,000 reads half a million rows).
CREATE OR REPLACE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, l.price, h.quantity * l.price AS value,
       b.previous_price,
       round(h.cost_basis / h.quantity, 4) AS average_cost,
       (l.price - coalesce(b.previous_price, l.price)) * h.quantity AS day_change
FROM holdings h
JOIN current_prices p ON p.symbol = h.symbol
CROSS JOIN LATERAL (SELECT CASE WHEN h.cash_currency = 'USD' THEN p.price
                                ELSE round(p.price * fx_usd_to(h.cash_currency), 4) END AS price) l
CROSS JOIN LATERAL (SELECT CASE WHEN h.cash_currency = 'USD' THEN p.previous_close
                                ELSE round(p.previous_close * fx_usd_to(h.cash_currency), 4) END AS previous_price) b
WHERE h.quantity <> 0;
