-- Every order as clients see it: the orders, and the plain market trades that are their
-- own filled market orders (with a UUID derived from the trade id, the same on every
-- read). Each carries its asset's UUID and the orders it replaces or was replaced by, and
-- a trailing stop its trail and best price since placing (hwm); and the shares filled so far
-- with their average price (an order's partial fills and its last one, its trade); its
-- class, and a leg its parent (OrderClass).
CREATE OR REPLACE VIEW order_book AS
SELECT o.id, o.user_id, o.portfolio_id, o.client_order_id, o.request_hash, o.symbol, o.side, o.type, o.time_in_force,
       o.quantity, o.limit_price, o.stop_price, o.status,
       CASE WHEN o.filled_quantity = 0 THEN t.price
            ELSE round((o.filled_amount + coalesce(t.price * t.quantity, 0)) / (o.filled_quantity + coalesce(t.quantity, 0)), 4)
       END AS fill_price, o.trade_id, o.created_at, o.updated_at,
       o.filled_at, o.canceled_at, o.expired_at, o.reject_reason, o.uuid,
       o.replaces, o.replaced_by, o.replaced_at,
       (SELECT r.uuid FROM orders r WHERE r.id = o.replaces) AS replaces_uuid,
       (SELECT r.uuid FROM orders r WHERE r.id = o.replaced_by) AS replaced_by_uuid,
       (SELECT i.uuid FROM instruments i WHERE i.symbol = o.symbol) AS asset_uuid,
       o.note, o.placed_by, o.trail_percent, o.trail_price, o.hwm,
       o.filled_quantity + coalesce(t.quantity, 0) AS filled_quantity, o.order_class, o.parent_id
FROM orders o LEFT JOIN trades t ON t.id = o.trade_id
UNION ALL
SELECT t.id, p.user_id, t.portfolio_id, NULL, NULL, t.symbol, t.side, 'market', 'day',
       t.quantity, NULL, NULL, 'filled', t.price, t.id, t.created_at, t.created_at,
       t.created_at, NULL, NULL, NULL, md5('mockstock-trade-' || t.id)::uuid,
       NULL, NULL, NULL, NULL, NULL, (SELECT i.uuid FROM instruments i WHERE i.symbol = t.symbol),
       t.note, t.placed_by, NULL, NULL, NULL, t.quantity, 'simple', NULL
FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
-- (A part an order filled is its order's, not a market order of its own.)
WHERE t.source <> 'order' AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id);
