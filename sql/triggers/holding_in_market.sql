-- A holding is of its portfolio's market: a scenario league's instrument only in a
-- portfolio of that league, and a portfolio of a scenario league only of its league's
-- instruments (docs/leagues.md, "Scenario leagues"). The server never asks otherwise
-- (TradingRules.instrument names a client's symbol in the portfolio's market); this is the
-- database's guard, checked when a position is opened (a PK lookup of the portfolio and of
-- its league's market).
CREATE OR REPLACE FUNCTION holding_in_market() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT i.league_id FROM instruments i WHERE i.symbol = NEW.symbol AND symbol_shown(NEW.symbol) <> NEW.symbol)
       IS DISTINCT FROM (SELECT m.league_id FROM portfolios p JOIN league_markets m ON m.league_id = p.league_id WHERE p.id = NEW.portfolio_id)
    THEN
        RAISE EXCEPTION 'a holding of % is outside its portfolio''s market', symbol_shown(NEW.symbol)
            USING ERRCODE = 'check_violation', CONSTRAINT = 'holdings_in_market';
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER holdings_in_market BEFORE INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION holding_in_market();
