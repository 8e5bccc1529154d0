-- The achievements that count trades (first_trade, ten_trades), checked when a
-- portfolio's cash changes while its owner may still earn them
-- (portfolios.trade_count_awards_due): every trade changes cash, and once both are earned
-- the portfolio's flag is cleared, so later trades fire nothing here. Each portfolio
-- clears only its own flag (clearing the owner's other portfolios could deadlock with a
-- trade there); a practice portfolio clears it at its first change.
CREATE OR REPLACE FUNCTION award_trade_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind <> 'practice' THEN
        PERFORM award_if_reached(NEW.user_id, 'first_trade');
        PERFORM award_if_reached(NEW.user_id, 'ten_trades');
        IF (SELECT count(*) FROM user_achievements
            WHERE user_id = NEW.user_id AND code IN ('first_trade', 'ten_trades')) < 2 THEN
            RETURN NULL;
        END IF;
    END IF;
    UPDATE portfolios SET trade_count_awards_due = false WHERE id = NEW.id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER portfolios_trade_count_awards AFTER UPDATE OF cash ON portfolios
    FOR EACH ROW WHEN (NEW.trade_count_awards_due) EXECUTE FUNCTION award_trade_count();
