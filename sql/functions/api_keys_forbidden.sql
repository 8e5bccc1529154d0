-- Whether a league forbids API keys on a portfolio: the portfolio is a league portfolio
-- of a running league whose bot policy is `forbidden`, or the personal portfolio of a
-- member of a running shared league that forbids them (a shared league ranks its
-- members' personal portfolios). The one rule behind creating keys and using them.
CREATE OR REPLACE FUNCTION api_keys_forbidden(p_portfolio bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM portfolios p JOIN leagues l ON l.id = p.league_id
        WHERE p.id = p_portfolio AND l.bots = 'forbidden' AND l.finished_at IS NULL
    ) OR EXISTS (
        SELECT 1 FROM portfolios p JOIN league_members m ON m.user_id = p.user_id JOIN leagues l ON l.id = m.league_id
        WHERE p.id = p_portfolio AND p.kind = 'personal' AND l.mode = 'shared' AND l.bots = 'forbidden' AND l.finished_at IS NULL
    )
$$;
