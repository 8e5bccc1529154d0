-- Stream events are queued in the transaction that makes the change and announced by the
-- server processes (sql/functions/stream_announce.sql), instead of by a NOTIFY in that
-- transaction: PostgreSQL serialises every notifying commit, flush included, behind one
-- lock, which held all trades to about 2,000 commits a second however many connections
-- ran them. Unlogged: an event is worth nothing after a crash (stream clients reconnect to
-- a gap and a fresh snapshot), so queueing one writes no WAL.
CREATE UNLOGGED TABLE stream_outbox (
    id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event jsonb NOT NULL
);
