-- How far a user is towards an achievement, capped at its target: the one definition
-- behind both the awards (award_if_reached) and the progress bars (AchievementStore).
-- Practice portfolios count for nothing. Achievements earned by an event (joining,
-- founding, the podium, up fifty) count 0 until earned.
CREATE OR REPLACE FUNCTION achievement_progress(p_user bigint, p_code text) RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT least(a.target, CASE a.code
        WHEN 'first_trade' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND p.kind <> 'practice' LIMIT a.target) n)
        WHEN 'ten_trades' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND p.kind <> 'practice' LIMIT a.target) n)
        WHEN 'first_profit' THEN (SELECT count(*) FROM (
            SELECT 1 FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
            WHERE p.user_id = p_user AND p.kind <> 'practice' AND t.realized_gain > 0 LIMIT a.target) n)
        WHEN 'diversified' THEN (SELECT coalesce(max(held), 0) FROM (
            SELECT count(*) AS held FROM holdings h JOIN portfolios p ON p.id = h.portfolio_id
            WHERE p.user_id = p_user AND p.kind <> 'practice' AND h.quantity > 0 GROUP BY h.portfolio_id) held)
        ELSE 0 END)::integer
    FROM achievements a WHERE a.code = p_code
$$;
