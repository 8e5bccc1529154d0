-- Each member's standing, best first: the personal portfolio in a shared league, the
-- league portfolio in an isolated one, valued through holding_values. Ties share a rank;
-- `place` orders ties by name. Bots are marked, with their owner's name, and every member
-- also has a place and rank among its own kind (`group_place`, `group_rank`: humans
-- apart from bots), for leagues that rank them apart. Plain SQL, so the planner inlines it
-- into the caller's query and plans it for the league at hand.
CREATE OR REPLACE FUNCTION league_standings_live(p_league bigint)
RETURNS TABLE (place bigint, rank bigint, user_id bigint, username text, net_worth numeric,
               cash numeric, holdings_value numeric, paid_in numeric,
               bot boolean, owner_username text, group_place bigint, group_rank bigint)
LANGUAGE sql STABLE AS $$
    WITH members AS (
        SELECT m.user_id, p.id AS portfolio_id, p.cash, p.paid_in
        FROM league_members m JOIN portfolios p ON p.user_id = m.user_id AND p.kind = 'personal'
        WHERE m.league_id = p_league AND (SELECT mode FROM leagues WHERE id = p_league) = 'shared'
        UNION ALL
        SELECT p.user_id, p.id, p.cash, p.paid_in
        FROM portfolios p
        WHERE p.league_id = p_league AND p.archived_at IS NULL AND (SELECT mode FROM leagues WHERE id = p_league) = 'isolated'
    ), valued AS (
        SELECT v.portfolio_id, sum(v.value) AS value
        FROM members JOIN holding_values v USING (portfolio_id)
        GROUP BY v.portfolio_id
    ), worth AS (
        SELECT members.user_id, u.username, members.cash + coalesce(valued.value, 0) AS net_worth,
               members.cash, coalesce(valued.value, 0) AS holdings_value, members.paid_in,
               u.bot_owner_id IS NOT NULL AS bot, owner.username AS owner_username
        FROM members JOIN users u ON u.id = members.user_id LEFT JOIN valued USING (portfolio_id)
             LEFT JOIN users owner ON owner.id = u.bot_owner_id
    )
    SELECT row_number() OVER (ORDER BY net_worth DESC, username, user_id),
           rank() OVER (ORDER BY net_worth DESC),
           user_id, username, net_worth, cash, holdings_value, paid_in, bot, owner_username,
           row_number() OVER (PARTITION BY bot ORDER BY net_worth DESC, username, user_id),
           rank() OVER (PARTITION BY bot ORDER BY net_worth DESC)
    FROM worth
$$;
