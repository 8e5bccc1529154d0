-- A logout or password change (the user's token version moving on) is announced on the
-- stream channel, so every server process closes the sockets opened with the tokens it
-- revoked at once, not only when they expire.
CREATE OR REPLACE FUNCTION stream_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'revoked', 'user', NEW.id, 'version', NEW.token_version));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER users_token_version_stream AFTER UPDATE OF token_version ON users
    FOR EACH ROW WHEN (NEW.token_version IS DISTINCT FROM OLD.token_version) EXECUTE FUNCTION stream_revocation();
