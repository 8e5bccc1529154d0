-- API keys deleted (revoked by their owner, their bot deleted, their account erased) are
-- announced on the stream channel, so every server process forgets them at once rather
-- than when its key cache expires.
CREATE OR REPLACE FUNCTION stream_keys_revoked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'keys_revoked', 'keys', jsonb_agg(key_id)))
    FROM gone HAVING count(*) > 0;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER api_keys_revoked_stream AFTER DELETE ON api_keys
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION stream_keys_revoked();
