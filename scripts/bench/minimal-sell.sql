\set uid random(:first, :last)
\set sym random(1, :symbols)
WITH held AS (UPDATE minimal.holdings SET quantity = quantity - 1, cost_basis = cost_basis - 100.00 WHERE account_id = :uid AND symbol = 'S' || :sym AND quantity >= 1 RETURNING account_id), cash AS (UPDATE minimal.accounts a SET cash = cash + 100.00 FROM held WHERE a.id = held.account_id RETURNING a.id) INSERT INTO minimal.trades (account_id, symbol, side, quantity, price, amount) SELECT id, 'S' || :sym, 'sell', 1, 100.00, 100.00 FROM cash;
