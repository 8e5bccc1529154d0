-- An order placed or changed (filled, canceled, expired, split) is announced on the
-- stream: its owner, id and status.
CREATE OR REPLACE FUNCTION stream_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'order', 'user', NEW.user_id, 'id', NEW.id, 'status', NEW.status));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER orders_stream AFTER INSERT OR UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION stream_order();
