-- Announces a live-stream event on the channel `mockstock_stream` when the transaction
-- commits, so it reaches every server process whichever process or script made the
-- change. A payload over NOTIFY's 8,000-byte limit is kept in `stream_payloads` and
-- announced by id.
CREATE OR REPLACE FUNCTION stream_publish(event jsonb) RETURNS void LANGUAGE plpgsql AS $$
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
