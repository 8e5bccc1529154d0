-- Every stored price change (a simulated tick, a replay, an admin's quote) updates the
-- bar of its minute, in the statement that stores the price; `ticks` counts the changes.
CREATE OR REPLACE FUNCTION minute_bar_tick() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO minute_bars AS b (symbol, minute, open, high, low, close)
    VALUES (NEW.symbol, date_trunc('minute', NEW.as_of), NEW.price, NEW.price, NEW.price, NEW.price)
    ON CONFLICT (symbol, minute) DO UPDATE
        SET high = greatest(b.high, EXCLUDED.close), low = least(b.low, EXCLUDED.close), close = EXCLUDED.close,
            ticks = b.ticks + 1;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER quotes_minute_bars AFTER INSERT OR UPDATE OF price, as_of ON quotes
    FOR EACH ROW EXECUTE FUNCTION minute_bar_tick();
