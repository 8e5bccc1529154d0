-- Creating a league (its owner's membership) or joining one earns an achievement.
CREATE OR REPLACE FUNCTION award_league_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM leagues WHERE id = NEW.league_id AND owner_id = NEW.user_id) THEN
        PERFORM award_achievement(NEW.user_id, 'created_league');
    ELSE
        PERFORM award_achievement(NEW.user_id, 'joined_league');
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER league_members_achievements AFTER INSERT ON league_members
    FOR EACH ROW EXECUTE FUNCTION award_league_achievements();
