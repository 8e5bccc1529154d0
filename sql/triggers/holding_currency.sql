-- A holding keeps its portfolio's currency (fixed when the portfolio is made, never
-- changed), so valuing holdings needs no join to portfolios.
CREATE OR REPLACE FUNCTION holding_currency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT cash_currency INTO STRICT NEW.cash_currency FROM portfolios WHERE id = NEW.portfolio_id;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER holdings_currency BEFORE INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION holding_currency();
