-- Awards an achievement once: the reward goes to the personal portfolio as a `reward`
-- cash movement, with a notification. Returns false when it was already earned. The
-- primary key of user_achievements makes a concurrent second award wait for the first
-- and then do nothing. An account without a personal portfolio (a team's) earns nothing.
CREATE OR REPLACE FUNCTION award_achievement(p_user bigint, p_code text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    earned achievements;
    personal bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM portfolios WHERE user_id = p_user AND kind = 'personal') THEN
        RETURN false;
    END IF;
    INSERT INTO user_achievements (user_id, code) VALUES (p_user, p_code) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    SELECT * INTO STRICT earned FROM achievements WHERE code = p_code;
    IF earned.reward > 0 THEN
        UPDATE portfolios SET cash = cash + earned.reward
        WHERE user_id = p_user AND kind = 'personal' RETURNING id INTO personal;
        INSERT INTO cash_movements (portfolio_id, kind, amount, note)
        VALUES (personal, 'reward', earned.reward, 'Achievement: ' || earned.name);
    END IF;
    PERFORM notify(p_user, 'Achievement earned: ' || earned.name,
                   earned.description || ' Reward: ' || money_text(earned.reward, 'USD') || ' added to your personal portfolio.');
    RETURN true;
END
$$;
