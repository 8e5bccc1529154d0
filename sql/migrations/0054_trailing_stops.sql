-- Trailing stops (docs/trading.md, "Orders"): a stop that follows the best price since
-- the order was placed (`hwm`: the highest for a sale, the lowest for a buy) by a
-- percentage or an amount; `stop_price` is the stop it makes now (SQL trailing_stop).
ALTER TABLE orders DROP CONSTRAINT orders_type_check;
ALTER TABLE orders ADD CONSTRAINT orders_type_check CHECK (type IN ('market', 'limit', 'stop', 'stop_limit', 'trailing_stop'));
ALTER TABLE orders DROP CONSTRAINT orders_stop_price_needed;
ALTER TABLE orders ADD CONSTRAINT orders_stop_price_needed
    CHECK ((type IN ('stop', 'stop_limit', 'trailing_stop')) = (stop_price IS NOT NULL));
ALTER TABLE orders
    ADD COLUMN trail_percent numeric CHECK (trail_percent > 0 AND trail_percent < 100),
    ADD COLUMN trail_price numeric CHECK (trail_price > 0),
    ADD COLUMN hwm numeric CHECK (hwm > 0),
    ADD CONSTRAINT orders_trail_needed CHECK (
        (type = 'trailing_stop') = (hwm IS NOT NULL)
        AND (type = 'trailing_stop') = ((trail_percent IS NULL) <> (trail_price IS NULL)));

-- A league's rules are fixed when it is created: leagues made before trailing stops keep
-- the order types they were made with; new ones allow trailing stops unless they choose.
ALTER TABLE leagues DROP CONSTRAINT leagues_allowed_order_types_check;
ALTER TABLE leagues ADD CONSTRAINT leagues_allowed_order_types_check
    CHECK (cardinality(allowed_order_types) >= 1 AND allowed_order_types <@ '{market,limit,stop,stop_limit,trailing_stop}');
ALTER TABLE leagues ALTER COLUMN allowed_order_types SET DEFAULT '{market,limit,stop,stop_limit,trailing_stop}';
