-- An order placed or changed (filled, canceled, expired, split) is announced on the
-- stream: its owner, id and status; whether the order was born with that status (a
-- market order written filled, a refusal written rejected), so Alpaca's stream can show
-- its `new` first; and for a fill, the portfolio's position in the symbol after it (an
-- AFTER trigger runs once the whole trade statement has, so the holding is updated).
CREATE OR REPLACE FUNCTION stream_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object(
        'kind', 'order', 'user', NEW.user_id, 'id', NEW.id, 'status', NEW.status, 'inserted', TG_OP = 'INSERT',
        'position', CASE WHEN NEW.status = 'filled' THEN coalesce(
            (SELECT quantity FROM holdings WHERE portfolio_id = NEW.portfolio_id AND symbol = NEW.symbol), 0) END
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
