\set uid random(:first, :last)
\set sym random(1, :symbols)
WITH cash AS (UPDATE minimal.accounts SET cash = cash + 100.00 WHERE id = :uid RETURNING id), held AS (UPDATE minimal.holdings h SET quantity = h.quantity - 1, cost_basis = h.cost_basis - 100.00 FROM cash WHERE h.account_id = cash.id AND h.symbol = 'S' || :sym AND h.quantity >= 1 RETURNING h.account_id) INSERT INTO minimal.trades (account_id, symbol, side, quantity, price, amount) SELECT account_id, 'S' || :sym, 'sell', 1, 100.00, 100.00 FROM held;
