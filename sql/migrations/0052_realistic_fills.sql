-- Realistic fills, league rules set at creation (docs/trading.md, "Realistic fills"):
-- the fill price from a spread around the last price (`fill_price` 'quote'), a market
-- impact that grows with the order's share of the previous trading day's volume, and
-- minimum prices for buying and for selling short. The defaults are the game's plain
-- fills: the last price, in any size.
ALTER TABLE leagues
    ADD COLUMN fill_price text NOT NULL DEFAULT 'last' CHECK (fill_price IN ('last', 'quote')),
    ADD COLUMN spread_bps numeric NOT NULL DEFAULT 10 CHECK (spread_bps BETWEEN 0 AND 500),
    ADD COLUMN impact_coefficient numeric NOT NULL DEFAULT 0 CHECK (impact_coefficient BETWEEN 0 AND 1),
    ADD COLUMN min_price numeric NOT NULL DEFAULT 0 CHECK (min_price BETWEEN 0 AND 1000000),
    ADD COLUMN min_short_price numeric NOT NULL DEFAULT 0 CHECK (min_short_price BETWEEN 0 AND 1000000);

-- A reason on every fill: what made it (a trade, an order, a liquidation) and where its
-- price came from, per share in the trade's currency: the quote is the price less the
-- spread and the impact for a buy, plus them for a sale.
ALTER TABLE trades
    ADD COLUMN source text NOT NULL DEFAULT 'trade' CHECK (source IN ('trade', 'order', 'liquidation')),
    ADD COLUMN spread numeric NOT NULL DEFAULT 0 CHECK (spread >= 0),
    ADD COLUMN impact numeric NOT NULL DEFAULT 0 CHECK (impact >= 0);

-- Fills written with an order row came from an order (a trade with a journal note, which
-- also wrote one, cannot be told apart and counts as an order).
UPDATE trades t SET source = 'order' FROM orders o WHERE o.trade_id = t.id;
