-- Whether an API key placed the order to rest (through `/v2`, or a replacement of such an
-- order). A league that forbids bots must stop every key trading its portfolios, keys made
-- before the change included: its key-placed resting orders are cancelled when the policy
-- changes, skipped by the matcher, and swept up if one was placed in the moment a key's
-- cached permission took to expire. Orders placed before this column existed count as
-- placed by hand.
ALTER TABLE orders ADD COLUMN by_key boolean NOT NULL DEFAULT false;
-- The sweep's look for them: only open orders keys placed.
CREATE INDEX orders_open_by_key ON orders (portfolio_id) WHERE status = 'new' AND by_key;
