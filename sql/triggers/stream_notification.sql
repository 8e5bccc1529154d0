-- A notification for one user, or for everyone (user NULL), announced on the stream.
CREATE OR REPLACE FUNCTION stream_notification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_publish(jsonb_build_object('kind', 'notification', 'user', NEW.user_id, 'id', NEW.id));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER notifications_stream AFTER INSERT ON notifications FOR EACH ROW EXECUTE FUNCTION stream_notification();
