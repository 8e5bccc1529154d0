-- Each member's standing, best first: the league's open portfolios (league_portfolios: the
-- personal portfolio in a shared league, the league portfolio in an isolated one), worth
-- their net_worth over holding_values. Ties share a rank;
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
        SELECT lp.user_id, p.id AS portfolio_id, p.cash, p.paid_in
        FROM league_portfolios(p_league) lp JOIN portfolios p ON p.id = lp.portfolio_id
        WHERE NOT lp.archived
    ), valued AS (
        SELECT v.portfolio_id, sum(v.value) AS value
        FROM members JOIN holding_values v USING (portfolio_id)
        GROUP BY v.portfolio_id
    ), worth AS (
        SELECT members.user_id, u.username, net_worth(members.cash, valued.value) AS net_worth,
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
