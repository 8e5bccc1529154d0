-- Intraday bars for `/v2/stocks/bars` (minutes and hours): every stored price change —
-- the simulated market's ticks, a replay, an admin's quote — updates the bar of its
-- minute, in the statement that stores the price. `ticks` counts the changes (Alpaca's
-- trade count `n`; the game has no volume). Bars older than seven days are forgotten by
-- every server process's housekeeping.
CREATE TABLE minute_bars (
    symbol text NOT NULL REFERENCES instruments (symbol) ON DELETE CASCADE,
    minute timestamptz NOT NULL,
    open   numeric NOT NULL CHECK (open > 0),
    high   numeric NOT NULL CHECK (high > 0),
    low    numeric NOT NULL CHECK (low > 0),
    close  numeric NOT NULL CHECK (close > 0),
    ticks  integer NOT NULL DEFAULT 1 CHECK (ticks > 0),
    PRIMARY KEY (symbol, minute),
    CONSTRAINT minute_bars_range CHECK (low <= least(open, close) AND high >= greatest(open, close))
);

CREATE INDEX minute_bars_minute ON minute_bars (minute);

CREATE FUNCTION minute_bar_tick() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO minute_bars AS b (symbol, minute, open, high, low, close)
    VALUES (NEW.symbol, date_trunc('minute', NEW.as_of), NEW.price, NEW.price, NEW.price, NEW.price)
    ON CONFLICT (symbol, minute) DO UPDATE
        SET high = greatest(b.high, EXCLUDED.close), low = least(b.low, EXCLUDED.close), close = EXCLUDED.close,
            ticks = b.ticks + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER quotes_minute_bars AFTER INSERT OR UPDATE OF price, as_of ON quotes
    FOR EACH ROW EXECUTE FUNCTION minute_bar_tick();
