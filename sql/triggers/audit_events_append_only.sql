-- The audit log is append-only in the database itself: an update, a delete or a truncate
-- of audit_events is refused, whoever asks.
CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege', TABLE = 'audit_events';
END
$$;

CREATE OR REPLACE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE OR REPLACE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
