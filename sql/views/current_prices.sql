-- The price every valuation uses: the instrument's quote, else its last daily close; and
-- the price before it, for the day's change: the quote's previous close, else (no quote)
-- the close before the last one. A view, so a query joining it by symbol is planned as a
-- join (one last-close lookup per instrument without a quote, not per holding), and a
-- reader that does not ask for previous_close does not compute it.
CREATE OR REPLACE VIEW current_prices AS
SELECT i.symbol,
       coalesce(q.price, (SELECT d.close FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 1)) AS price,
       coalesce(q.previous_close,
                CASE WHEN q.symbol IS NULL
                     THEN (SELECT d.close FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC OFFSET 1 LIMIT 1) END
       ) AS previous_close
FROM instruments i LEFT JOIN quotes q ON q.symbol = i.symbol;
