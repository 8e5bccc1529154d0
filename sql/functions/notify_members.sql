-- Notifies every member of a league (its seats; a host without one is not told), through
-- notify, the one writer of notifications. Returns how many were told.
CREATE OR REPLACE FUNCTION notify_members(p_league bigint, p_title text, p_body text) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(notify(m.user_id, p_title, p_body)) FROM league_members m WHERE m.league_id = p_league
$$;
