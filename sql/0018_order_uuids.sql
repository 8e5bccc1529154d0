-- Every order as clients see it gains its UUID (how `/v2` names orders). A plain market
-- trade, its own filled market order, has one derived from its trade id, so it is the
-- same on every read.
CREATE OR REPLACE VIEW order_book AS
SELECT o.id, o.user_id, o.portfolio_id, o.client_order_id, o.request_hash, o.symbol, o.side, o.type, o.time_in_force,
       o.quantity, o.limit_price, o.stop_price, o.status, t.price AS fill_price, o.trade_id, o.created_at, o.updated_at,
       o.filled_at, o.canceled_at, o.expired_at, o.reject_reason, o.uuid
FROM orders o LEFT JOIN trades t ON t.id = o.trade_id
UNION ALL
SELECT t.id, p.user_id, t.portfolio_id, NULL, NULL, t.symbol, t.side, 'market', 'day',
       t.quantity, NULL, NULL, 'filled', t.price, t.id, t.created_at, t.created_at,
       t.created_at, NULL, NULL, NULL, md5('mockstock-trade-' || t.id)::uuid
FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id);
