-- The portfolios a league's members play, present and past: in a shared league each
-- member's personal portfolio, in an isolated one every league portfolio of the league,
-- archived ones included (a reset or a member who left keeps their history). `since` is
-- when a portfolio's history starts to belong to the league: in a shared league the later
-- of the member's join and the league's start (a personal portfolio's earlier trades and
-- notes are the member's own business), in an isolated one the league's start. For what
-- reads a league's history (its journal, the gradebook's counts); the live standings rank
-- the open ones (league_standings_live). Plain SQL, inlined into the caller's query.
CREATE OR REPLACE FUNCTION league_portfolios(p_league bigint)
RETURNS TABLE (user_id bigint, portfolio_id bigint, archived boolean, since timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT m.user_id, p.id, false, greatest(m.joined_at, l.starts_at)
    FROM leagues l JOIN league_members m ON m.league_id = l.id
         JOIN portfolios p ON p.user_id = m.user_id AND p.kind = 'personal'
    WHERE l.id = p_league AND l.mode = 'shared'
    UNION ALL
    SELECT p.user_id, p.id, p.archived_at IS NOT NULL, l.starts_at
    FROM portfolios p JOIN leagues l ON l.id = p.league_id
    WHERE p.league_id = p_league
$$;
