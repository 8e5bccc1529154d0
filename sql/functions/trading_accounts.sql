-- The accounts whose portfolios a user trades: their own, and the teams they are a trader
-- of (a team's league portfolio is held by the team's account). Asked by the trade and
-- placing statements when a request names a portfolio.
CREATE OR REPLACE FUNCTION trading_accounts(p_user bigint) RETURNS bigint[] LANGUAGE sql STABLE AS $$
    SELECT p_user || coalesce(array_agg(t.account_id), '{}')
    FROM team_members m JOIN teams t ON t.id = m.team_id
    WHERE m.user_id = p_user AND m.role = 'trader'
$$;
