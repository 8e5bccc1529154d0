-- Money paid into each portfolio (Σ cash movements but income: dividends, cash in lieu,
-- a league's interest and borrow fees are returns), kept on portfolios.paid_in; the base of returns and of the "up
-- fifty" achievement.
CREATE OR REPLACE FUNCTION count_paid_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind NOT IN ('dividend', 'cash_in_lieu', 'interest', 'borrow_fee') THEN
        UPDATE portfolios SET paid_in = paid_in + NEW.amount WHERE id = NEW.portfolio_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER cash_movements_paid_in AFTER INSERT ON cash_movements
    FOR EACH ROW EXECUTE FUNCTION count_paid_in();
