-- The price every valuation uses: the instrument's quote, else its last daily close.
-- A view, so a query joining it by symbol is planned as a join (one last-close lookup per
-- instrument without a quote, not per holding).
CREATE OR REPLACE VIEW current_prices AS
SELECT i.symbol,
       coalesce(q.price, (SELECT d.close FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 1)) AS price
FROM instruments i LEFT JOIN quotes q ON q.symbol = i.symbol;
