-- The accounts whose portfolios a user sees: their own, and every team they are on, as a
-- trader or a viewer.
CREATE OR REPLACE FUNCTION viewing_accounts(p_user bigint) RETURNS bigint[] LANGUAGE sql STABLE AS $$
    SELECT p_user || coalesce(array_agg(t.account_id), '{}')
    FROM team_members m JOIN teams t ON t.id = m.team_id
    WHERE m.user_id = p_user
$$;
