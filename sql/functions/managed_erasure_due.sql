-- The managed students a league's retention setting erases at p_at: members of a league
-- whose host manages their account, once delete_managed_after_days have passed since the
-- league's end, unless the student plays in another league of the same host that has not
-- ended. One row per league and student.
CREATE OR REPLACE FUNCTION managed_erasure_due(p_at timestamptz)
RETURNS TABLE (league_id bigint, host_id bigint, user_id bigint) LANGUAGE sql STABLE AS $$
    SELECT l.id, l.owner_id, u.id
    FROM leagues l
    JOIN league_members m ON m.league_id = l.id
    JOIN users u ON u.id = m.user_id AND u.managed_by = l.owner_id
    WHERE l.delete_managed_after_days IS NOT NULL
      AND l.ends_at + make_interval(days => l.delete_managed_after_days) <= p_at
      AND NOT EXISTS (
          SELECT 1 FROM league_members other JOIN leagues o ON o.id = other.league_id
          WHERE other.user_id = u.id AND o.owner_id = u.managed_by AND o.id <> l.id AND NOT league_ended(o, p_at))
$$;
