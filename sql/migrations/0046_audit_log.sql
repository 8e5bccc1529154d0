-- The audit log: one row per action of a host or an admin, written in the transaction
-- that does the action, never changed or removed (triggers/audit_events_append_only.sql).
-- It keeps ids, not names: an erased account's id stays in the log, and nothing else of
-- it. `details` is an object of what the action changed (field names, counts, ids),
-- never a password or a secret.
CREATE TABLE audit_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at             timestamptz NOT NULL DEFAULT now(),
    actor_id       bigint NOT NULL,
    action         text NOT NULL CHECK (action ~ '^[a-z]+\.[a-z_]+$'),
    league_id      bigint,
    target_user_id bigint,
    details        jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
    request_id     text CHECK (length(request_id) <= 128)
);
-- A league's log and an admin's filters, newest first.
CREATE INDEX audit_events_by_league ON audit_events (league_id, id) WHERE league_id IS NOT NULL;
CREATE INDEX audit_events_by_actor ON audit_events (actor_id, id);
CREATE INDEX audit_events_by_action ON audit_events (action, id);
