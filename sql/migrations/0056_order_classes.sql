-- Orders of several parts, as Alpaca names them (docs/trading.md, "Brackets, OCO and
-- OTO"): a bracket (an entry with a take-profit and a stop-loss leg), an OTO (an entry
-- with one leg) and an OCO (a take-profit and a stop-loss for a position held). Legs
-- name their parent (the entry; for an OCO, its take-profit); a pair of legs name each
-- other (`sibling_id`): the first to fill cancels the other, and their shares are held
-- once, by the one of the lower id. A leg waits, `held`, until its entry fills (holding
-- nothing, as every order not open: orders_released_when_closed).
ALTER TABLE orders
    ADD COLUMN order_class text NOT NULL DEFAULT 'simple' CHECK (order_class IN ('simple', 'bracket', 'oco', 'oto')),
    ADD COLUMN parent_id bigint REFERENCES orders (id) ON DELETE CASCADE,
    ADD COLUMN sibling_id bigint REFERENCES orders (id) ON DELETE SET NULL;
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check
    CHECK (status IN ('new', 'held', 'filled', 'canceled', 'expired', 'rejected', 'replaced'));
CREATE INDEX orders_parent ON orders (parent_id) WHERE parent_id IS NOT NULL;
-- Closing orders learns to leave their holds to a caller that released them (a leg's fill).
DROP FUNCTION IF EXISTS close_orders(bigint[], text, text);
