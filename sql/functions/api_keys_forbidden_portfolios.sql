-- The portfolios no API key may trade: the league portfolios of running leagues whose bot
-- policy is `forbidden`, and the personal portfolios of the members of running shared
-- leagues that forbid them (a shared league ranks its members' personal portfolios). The
-- one rule behind creating keys, using them and the orders they placed: as a set for
-- the matcher and the sweep (read once per statement), one portfolio at a time through
-- api_keys_forbidden. Plain SQL, inlined into the caller's query.
CREATE OR REPLACE FUNCTION api_keys_forbidden_portfolios() RETURNS TABLE (portfolio_id bigint) LANGUAGE sql STABLE AS $$
    SELECT p.id FROM leagues l JOIN portfolios p ON p.league_id = l.id
    WHERE l.bots = 'forbidden' AND l.finished_at IS NULL
    UNION ALL
    SELECT p.id FROM leagues l JOIN league_members m ON m.league_id = l.id
         JOIN portfolios p ON p.user_id = m.user_id AND p.kind = 'personal'
    WHERE l.mode = 'shared' AND l.bots = 'forbidden' AND l.finished_at IS NULL
$$;
