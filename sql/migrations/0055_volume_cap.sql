-- A cap on a portfolio's share of the day's volume, a league rule set at creation
-- (docs/trading.md, "Realistic fills"): in one market day a portfolio's fills in a symbol
-- total at most ⌊volume_cap_percent % × V⌋ shares (at least 1), V being the symbol's volume
-- on the previous trading day; null, no cap.
ALTER TABLE leagues ADD COLUMN volume_cap_percent numeric CHECK (volume_cap_percent BETWEEN 0.1 AND 100);

-- What each capped portfolio has filled of a symbol on a market day, counted by the fill
-- statement itself (an upsert that locks the row, so fills at once on several processes
-- add up) under the cap that day: a fill that would pass it fails as a whole. Only fills
-- in capped leagues are counted.
CREATE TABLE volume_fills (
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    symbol text NOT NULL,
    day date NOT NULL,
    quantity bigint NOT NULL CHECK (quantity > 0),
    cap bigint NOT NULL CHECK (cap > 0),
    PRIMARY KEY (portfolio_id, symbol, day),
    CONSTRAINT volume_fills_within_cap CHECK (quantity <= cap)
);

-- An order's partial fills: the shares and amount (price × shares, in the portfolio's
-- currency) of the fills that left it open; its last fill is its trade (trade_id). An
-- order without partial fills keeps 0 in both.
ALTER TABLE orders
    ADD COLUMN filled_quantity bigint NOT NULL DEFAULT 0 CHECK (filled_quantity >= 0),
    ADD COLUMN filled_amount numeric NOT NULL DEFAULT 0 CHECK (filled_amount >= 0);
ALTER TABLE orders ADD CONSTRAINT orders_filled_within_quantity CHECK (filled_quantity < quantity OR filled_quantity = 0);
