-- The one writer of notifications: to a user, or to everyone (p_user NULL, a broadcast);
-- p_kind says what it is about where a client may act on it (margin_call, liquidated).
CREATE OR REPLACE FUNCTION notify(p_user bigint, p_title text, p_body text, p_kind text DEFAULT NULL) RETURNS notifications
LANGUAGE sql AS $$
    INSERT INTO notifications (user_id, title, body, kind) VALUES (p_user, p_title, p_body, p_kind) RETURNING *
$$;
