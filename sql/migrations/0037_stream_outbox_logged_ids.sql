-- A sequence that belongs to an unlogged table is unlogged too, and a replica promoted by
-- a failover cannot use one ("bad magic number in sequence"): every trade, which queues
-- stream events, then failed on the new primary. The outbox's ids come from a logged
-- sequence instead (it writes WAL once per 32 ids); the table stays unlogged, and a
-- failover leaves it empty and writable.
CREATE SEQUENCE stream_outbox_ids;
SELECT setval('stream_outbox_ids', coalesce((SELECT max(id) FROM stream_outbox), 0) + 1, false);
ALTER TABLE stream_outbox ALTER COLUMN id DROP IDENTITY;
ALTER TABLE stream_outbox ALTER COLUMN id SET DEFAULT nextval('stream_outbox_ids');
