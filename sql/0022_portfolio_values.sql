-- Portfolios' end-of-day values, kept once computed, so a long value history is read
-- rather than rebuilt on every request (Analytics/ValueHistoryStore.swift). A stored day
-- counts only while its `mark` matches the portfolio's history now: how many trades,
-- cash movements and applied corporate actions it has, and the price-history epoch. The
-- history only grows, so every insert changes a count whenever it commits, and a value
-- computed from an older history (even by a request racing the insert) is never used.
-- Days before the market's today only: today is always computed, at live prices.
CREATE TABLE portfolio_values (
    portfolio_id   bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    -- The market's time zone the days were counted in (MARKET_HOURS).
    time_zone      text NOT NULL,
    day            date NOT NULL,
    mark           text NOT NULL,
    cash           numeric NOT NULL,
    holdings_value numeric NOT NULL,
    inflow_to_date numeric NOT NULL,
    PRIMARY KEY (portfolio_id, time_zone, day)
);

-- Moved on by every statement that changes stored daily prices (uploads, seeding,
-- instruments removed), in its own transaction: stored values priced before it are stale.
CREATE TABLE price_history_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    epoch    bigint NOT NULL
);
INSERT INTO price_history_epoch VALUES (true, 0);

CREATE FUNCTION price_history_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE price_history_epoch SET epoch = epoch + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER daily_bars_price_history AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON daily_bars
    FOR EACH STATEMENT EXECUTE FUNCTION price_history_changed();
