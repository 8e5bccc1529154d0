-- Closes open orders — `canceled`, `expired`, `rejected` or `replaced` (p_status), with a
-- reason the trader reads (p_reason, NULL for none) — and releases what they hold back:
-- the cash a buy reserved goes back to its portfolio's buying power, the shares a sale
-- reserved back to its holding's free shares. A leg waiting for its entry (`held`) closes
-- too, holding nothing. Orders of p_orders no longer open are left alone. The caller locks the orders first (OrderStore's closing statement, which picks
-- and locks them; apply_corporate_action, for a split that leaves an order no whole
-- share), then this locks their portfolios and holdings: the lock order of every
-- statement that touches orders. The one rule of closing an order. Returns the ids
-- closed, in order. p_release false: the caller has released what they held (a leg's
-- fill statement, which releases its sibling's hold with its own, then closes it here).
CREATE OR REPLACE FUNCTION close_orders(p_orders bigint[], p_status text, p_reason text, p_release boolean DEFAULT true)
RETURNS SETOF bigint
LANGUAGE sql AS $$
    WITH claimed AS (
        SELECT o.id, o.portfolio_id, o.symbol, o.reserved_cash, o.reserved_quantity FROM orders o
        WHERE o.id = ANY(p_orders) AND o.status IN ('new', 'held')
    ), closed AS (
        UPDATE orders o SET status = p_status, reserved_cash = 0, reserved_quantity = 0, updated_at = now(),
                            canceled_at = CASE WHEN p_status = 'canceled' THEN now() END,
                            expired_at = CASE WHEN p_status = 'expired' THEN now() END,
                            replaced_at = CASE WHEN p_status = 'replaced' THEN now() END,
                            reject_reason = p_reason
        FROM claimed WHERE o.id = claimed.id
        RETURNING o.id
    ), released_cash AS (
        UPDATE portfolios p SET reserved_cash = p.reserved_cash - r.total
        FROM (SELECT portfolio_id, sum(reserved_cash) AS total FROM claimed
              GROUP BY portfolio_id HAVING sum(reserved_cash) > 0) r
        WHERE p_release AND p.id = r.portfolio_id
    ), released_shares AS (
        UPDATE holdings h SET reserved_quantity = h.reserved_quantity - r.total
        FROM (SELECT portfolio_id, symbol, sum(reserved_quantity) AS total FROM claimed
              GROUP BY portfolio_id, symbol HAVING sum(reserved_quantity) > 0) r
        WHERE p_release AND h.portfolio_id = r.portfolio_id AND h.symbol = r.symbol
    )
    SELECT id FROM closed ORDER BY id
$$;
