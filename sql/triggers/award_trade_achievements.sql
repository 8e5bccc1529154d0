-- The trade achievements after each trade, in its transaction: each unearned one is
-- checked against achievement_progress when the trade could have moved it (a profit only
-- by a profitable sale, diversity only by a purchase); once a user has earned them all,
-- a trade costs one lookup here, and a practice portfolio's trade checks nothing.
CREATE OR REPLACE FUNCTION award_trade_achievements() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner bigint;
    practising boolean;
    earned text[];
BEGIN
    SELECT p.user_id, p.kind = 'practice', ARRAY(SELECT a.code FROM user_achievements a WHERE a.user_id = p.user_id)
    INTO STRICT owner, practising, earned
    FROM portfolios p WHERE p.id = NEW.portfolio_id;
    IF practising THEN
        RETURN NULL;
    END IF;
    IF NOT 'first_trade' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'first_trade');
    END IF;
    IF NEW.realized_gain > 0 AND NOT 'first_profit' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'first_profit');
    END IF;
    IF NOT 'ten_trades' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'ten_trades');
    END IF;
    IF NEW.side = 'buy' AND NOT 'diversified' = ANY (earned) THEN
        PERFORM award_if_reached(owner, 'diversified');
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER trades_achievements AFTER INSERT ON trades
    FOR EACH ROW EXECUTE FUNCTION award_trade_achievements();
