-- Queues a live-stream event for the channel `mockstock_stream`. It is written to
-- stream_outbox in the caller's transaction, so it is announced only if that commits, and
-- whichever process or script made the change, one of the server processes announces it
-- within STREAM_ANNOUNCE_MS (stream_announce).
CREATE OR REPLACE FUNCTION stream_publish(event jsonb) RETURNS void LANGUAGE sql AS $$
    INSERT INTO stream_outbox (event) VALUES (event)
$$;
