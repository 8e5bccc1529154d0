-- Replacing an open order (`PATCH /api/orders/{id}`, `PATCH /v2/orders/{id}`): in one
-- transaction the order closes as `replaced`, releasing what it reserved, and a new order
-- with the changed quantity, prices or time in force takes its place; each names the
-- other. If the new order cannot be placed (no buying power for it), nothing changes.
-- Every order as clients see it also carries its asset's UUID, so `/v2` shapes an order
-- (in a response or on the trade-update stream) without another read.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders
    ADD CONSTRAINT orders_status_check CHECK (status IN ('new', 'filled', 'canceled', 'expired', 'rejected', 'replaced')),
    ADD COLUMN replaces    bigint UNIQUE REFERENCES orders (id),
    ADD COLUMN replaced_by bigint UNIQUE REFERENCES orders (id),
    ADD COLUMN replaced_at timestamptz,
    ADD CONSTRAINT orders_replaced_by_only_when_replaced CHECK (replaced_by IS NULL OR status = 'replaced'),
    ADD CONSTRAINT orders_replaced_at_when_replaced CHECK ((status = 'replaced') = (replaced_at IS NOT NULL));

CREATE OR REPLACE VIEW order_book AS
SELECT o.id, o.user_id, o.portfolio_id, o.client_order_id, o.request_hash, o.symbol, o.side, o.type, o.time_in_force,
       o.quantity, o.limit_price, o.stop_price, o.status, t.price AS fill_price, o.trade_id, o.created_at, o.updated_at,
       o.filled_at, o.canceled_at, o.expired_at, o.reject_reason, o.uuid,
       o.replaces, o.replaced_by, o.replaced_at,
       (SELECT r.uuid FROM orders r WHERE r.id = o.replaces) AS replaces_uuid,
       (SELECT r.uuid FROM orders r WHERE r.id = o.replaced_by) AS replaced_by_uuid,
       (SELECT i.uuid FROM instruments i WHERE i.symbol = o.symbol) AS asset_uuid
FROM orders o LEFT JOIN trades t ON t.id = o.trade_id
UNION ALL
SELECT t.id, p.user_id, t.portfolio_id, NULL, NULL, t.symbol, t.side, 'market', 'day',
       t.quantity, NULL, NULL, 'filled', t.price, t.id, t.created_at, t.created_at,
       t.created_at, NULL, NULL, NULL, md5('mockstock-trade-' || t.id)::uuid,
       NULL, NULL, NULL, NULL, NULL, (SELECT i.uuid FROM instruments i WHERE i.symbol = t.symbol)
FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id);
