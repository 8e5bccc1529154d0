-- Every statement that changes stored daily prices moves the price-history epoch on, so
-- portfolio values kept before it are no longer used. Inserted bars: price_history_added.
CREATE OR REPLACE FUNCTION price_history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE price_history_epoch SET epoch = epoch + 1;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER daily_bars_price_history AFTER UPDATE OR DELETE OR TRUNCATE ON daily_bars
    FOR EACH STATEMENT EXECUTE FUNCTION price_history_changed();
