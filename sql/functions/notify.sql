-- The one writer of notifications: to a user, or to everyone (p_user NULL, a broadcast).
CREATE OR REPLACE FUNCTION notify(p_user bigint, p_title text, p_body text) RETURNS notifications LANGUAGE sql AS $$
    INSERT INTO notifications (user_id, title, body) VALUES (p_user, p_title, p_body) RETURNING *
$$;
