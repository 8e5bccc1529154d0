-- Announces up to p_limit queued stream events (stream_outbox), oldest first, on the
-- channel `mockstock_stream` when the caller's transaction commits, and returns how many.
-- One announcer at a time (an advisory lock), so events leave in the order they were
-- queued, and each leaves once: the rows announced are deleted in the same transaction.
-- A payload over NOTIFY's 8,000-byte limit is kept in stream_payloads and announced by id.
-- The transaction commits without waiting for its flush (synchronous_commit off): it holds
-- PostgreSQL's lock over notifying commits only until its commit record is written, and
-- an announcement lost in a crash is covered by the snapshot a reconnecting client gets.
CREATE OR REPLACE FUNCTION stream_announce(p_limit bigint) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    queued record;
    announced bigint[] := '{}';
    message text;
    reference bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(21313, 1);  -- "SA" (0x5341)
    FOR queued IN SELECT id, event FROM stream_outbox ORDER BY id LIMIT p_limit LOOP
        message := queued.event::text;
        IF octet_length(message) >= 8000 THEN
            INSERT INTO stream_payloads (payload) VALUES (queued.event) RETURNING id INTO reference;
            message := jsonb_build_object('ref', reference)::text;
        END IF;
        PERFORM pg_notify('mockstock_stream', message);
        announced := announced || queued.id;
    END LOOP;
    -- The rows read above, by id: one queued meanwhile with a lower id waits for the next call.
    DELETE FROM stream_outbox WHERE id = ANY (announced);
    RETURN cardinality(announced);
END
$$;
