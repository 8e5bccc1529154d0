-- A holding below zero shares is a short position, allowed only in a league whose rules
-- allow short selling; only rows going below zero pay for the check.
CREATE OR REPLACE FUNCTION refuse_short_unless_allowed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM portfolios p JOIN leagues l ON l.id = p.league_id
        WHERE p.id = NEW.portfolio_id AND l.allow_short_selling
    ) THEN
        RAISE EXCEPTION 'a short position needs a league that allows short selling'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'holdings_quantity_check', TABLE = 'holdings', COLUMN = 'quantity';
    END IF;
    RETURN NEW;
END
$$;

-- Only rows going below zero pay for the check.
CREATE OR REPLACE TRIGGER holdings_short_allowed BEFORE INSERT OR UPDATE ON holdings
    FOR EACH ROW WHEN (NEW.quantity < 0) EXECUTE FUNCTION refuse_short_unless_allowed();
