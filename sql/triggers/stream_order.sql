-- An order placed or changed (filled in part or whole, canceled, expired, split) is
-- announced on the stream: its owner, id and status; whether the order was born with that status (a
-- market order written filled, a refusal written rejected), so Alpaca's stream can show
-- its `new` first; and for a fill, its shares and the portfolio's position in the symbol after it (an
-- AFTER trigger runs once the whole trade statement has, so the holding is updated).
CREATE OR REPLACE FUNCTION stream_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- An open order that filled in part is announced as partially_filled (never stored).
    partial boolean := TG_OP = 'UPDATE' AND NEW.status = 'new' AND NEW.filled_quantity > OLD.filled_quantity;
BEGIN
    PERFORM stream_publish(jsonb_build_object(
        'kind', 'order', 'user', NEW.user_id, 'id', NEW.id,
        'status', CASE WHEN partial THEN 'partially_filled' ELSE NEW.status END, 'inserted', TG_OP = 'INSERT',
        'position', CASE WHEN NEW.status = 'filled' OR partial THEN coalesce(
            (SELECT quantity FROM holdings WHERE portfolio_id = NEW.portfolio_id AND symbol = NEW.symbol), 0) END,
        -- The shares of this fill: the part, or what was left.
        'fill', CASE WHEN partial THEN NEW.filled_quantity - OLD.filled_quantity
                     WHEN NEW.status = 'filled' THEN NEW.quantity - coalesce(OLD.filled_quantity, 0) END
    ));
    RETURN NULL;
END
$$;

-- A closed order touched again (the replaced order learning its replacement's id) has
-- nothing new to announce; an open one changed in place (a split's adjustment, a
-- stop-limit triggered) is announced again for the web client's lists.
CREATE OR REPLACE TRIGGER orders_stream AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION stream_order();
CREATE OR REPLACE TRIGGER orders_stream_change AFTER UPDATE ON orders FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR NEW.status = 'new') EXECUTE FUNCTION stream_order();
