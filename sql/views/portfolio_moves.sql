-- What each activity does to a portfolio, the one definition the portfolio figures share
-- (value history, composition): the cash it moves (amount), the money it brings in or
-- takes out (inflow: starting cash, deposits, withdrawals, rewards, adjustments —
-- dividends and cash in lieu are returns, not inflows) and the shares it adds or removes
-- (a buy adds, a sale removes, a split adds or removes what it changed).
CREATE OR REPLACE VIEW portfolio_moves AS
SELECT a.portfolio_id, a.at, a.type, a.symbol, coalesce(a.amount, 0) AS amount,
       CASE WHEN a.type IN ('starting_cash', 'reward', 'adjustment', 'deposit', 'withdrawal') THEN a.amount ELSE 0 END AS inflow,
       CASE a.type WHEN 'fill' THEN CASE a.side WHEN 'buy' THEN a.quantity ELSE -a.quantity END
                   WHEN 'split' THEN a.quantity ELSE 0 END AS shares
FROM activities a;
