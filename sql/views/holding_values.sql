-- What each position is worth at current prices, in its portfolio's currency (a dollar
-- price times the rate now, to four decimals): negative for a short. The one SQL
-- valuation of holdings (standings, achievements, margin, position limits).
CREATE OR REPLACE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, l.price, h.quantity * l.price AS value
FROM holdings h
JOIN current_prices p ON p.symbol = h.symbol
CROSS JOIN LATERAL (SELECT CASE WHEN h.cash_currency = 'USD' THEN p.price
                                ELSE round(p.price * fx_usd_to(h.cash_currency), 4) END AS price) l
WHERE h.quantity <> 0;
