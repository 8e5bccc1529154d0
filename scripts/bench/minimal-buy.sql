\set uid random(:first, :last)
\set sym random(1, :symbols)
WITH cash AS (UPDATE minimal.accounts SET cash = cash - 100.00 WHERE id = :uid AND cash >= 100.00 RETURNING id), held AS (INSERT INTO minimal.holdings AS h SELECT id, 'S' || :sym, 1, 100.00 FROM cash ON CONFLICT (account_id, symbol) DO UPDATE SET quantity = h.quantity + 1, cost_basis = h.cost_basis + 100.00 RETURNING quantity) INSERT INTO minimal.trades (account_id, symbol, side, quantity, price, amount) SELECT id, 'S' || :sym, 'buy', 1, 100.00, 100.00 FROM cash, held;
