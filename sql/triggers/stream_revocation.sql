-- A logout or password change (the user's token version moving on), or an account erased,
-- is announced on the stream channel, so every server process forgets the user's tokens
-- and closes the sockets opened with them at once, not only when they expire. An erased
-- account's every version is revoked.
CREATE OR REPLACE FUNCTION stream_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM stream_publish(jsonb_build_object('kind', 'revoked', 'user', OLD.id, 'version', 2147483647));
    ELSE
        PERFORM stream_publish(jsonb_build_object('kind', 'revoked', 'user', NEW.id, 'version', NEW.token_version));
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER users_token_version_stream AFTER UPDATE OF token_version ON users
    FOR EACH ROW WHEN (NEW.token_version IS DISTINCT FROM OLD.token_version) EXECUTE FUNCTION stream_revocation();
CREATE OR REPLACE TRIGGER users_erased_stream AFTER DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION stream_revocation();
