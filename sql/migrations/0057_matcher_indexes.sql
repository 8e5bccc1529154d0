-- The matcher's statement moves trailing stops and triggers stop-limits before it reads
-- what the prices cross (OrderStore.fillable). Without these each of those two updates
-- read every open order of the symbols stored: 1.4 ms apiece over 10,000 orders, even
-- when no order is of that type (docs/benchmarks.md, "Realistic fills and order types").
CREATE INDEX orders_open_trailing ON orders (symbol) WHERE status = 'new' AND type = 'trailing_stop';
CREATE INDEX orders_open_untriggered ON orders (symbol) WHERE status = 'new' AND type = 'stop_limit' AND triggered_at IS NULL;
