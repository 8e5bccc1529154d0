-- Live updates. Whatever a stream client follows is announced on the channel
-- `mockstock_stream` when the transaction that changed it commits, by triggers here, so
-- it reaches every server process (each listens once) whichever process — or admin
-- script — made the change. Payloads are small JSON references; the listening process
-- reads what it needs. A payload over NOTIFY's 8,000-byte limit is kept in
-- `stream_payloads` and announced by id.

CREATE TABLE stream_payloads (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION stream_publish(event jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    message text := event::text;
    reference bigint;
BEGIN
    IF octet_length(message) < 8000 THEN
        PERFORM pg_notify('mockstock_stream', message);
    ELSE
        INSERT INTO stream_payloads (payload) VALUES (event) RETURNING id INTO reference;
        PERFORM pg_notify('mockstock_stream', jsonb_build_object('ref', reference)::text);
    END IF;
END
$$;

-- One announcement per statement that stores prices (a simulated tick, a replay day, an
-- admin's price), with every quote it wrote: [symbol, name, price, previous close, as of].
CREATE FUNCTION stream_quotes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    quotes jsonb;
BEGIN
    SELECT jsonb_agg(jsonb_build_array(
               c.symbol, i.name, c.price::text, c.previous_close::text,
               to_char(c.as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           ) ORDER BY c.symbol)
    INTO quotes
    FROM changed c JOIN instruments i ON i.symbol = c.symbol;
    IF quotes IS NOT NULL THEN
        PERFORM stream_publish(jsonb_build_object('kind', 'quotes', 'quotes', quotes));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER quotes_inserted_stream AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stream_quotes();
CREATE TRIGGER quotes_updated_stream AFTER UPDATE ON quotes
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stream_quotes();

-- An order placed or changed (filled, canceled, expired, split): its owner, id and status.
CREATE FUNCTION stream_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'order', 'user', NEW.user_id, 'id', NEW.id, 'status', NEW.status));
    RETURN NULL;
END
$$;

CREATE TRIGGER orders_stream AFTER INSERT OR UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION stream_order();

-- A notification for one user, or for everyone (user NULL).
CREATE FUNCTION stream_notification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'notification', 'user', NEW.user_id, 'id', NEW.id));
    RETURN NULL;
END
$$;

CREATE TRIGGER notifications_stream AFTER INSERT ON notifications FOR EACH ROW EXECUTE FUNCTION stream_notification();
