-- Awards the achievement when the user's progress has reached its target.
CREATE OR REPLACE FUNCTION award_if_reached(p_user bigint, p_code text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF achievement_progress(p_user, p_code) >= (SELECT target FROM achievements WHERE code = p_code) THEN
        RETURN award_achievement(p_user, p_code);
    END IF;
    RETURN false;
END
$$;
