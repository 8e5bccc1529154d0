-- Inserted daily bars move the price-history epoch on (as price_history_changed does for
-- every other change) only when bars of the real market are among them: a scenario
-- league's are written once a day by its advance (league_market_advance), for a day no
-- value of its portfolios was kept for yet, and no other portfolio holds its instruments;
-- so a league's day passing leaves every kept value, and the epoch's row, alone.
CREATE OR REPLACE FUNCTION price_history_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM added WHERE symbol_shown(added.symbol) = added.symbol) THEN
        UPDATE price_history_epoch SET epoch = epoch + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER daily_bars_price_history_added AFTER INSERT ON daily_bars REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION price_history_added();
