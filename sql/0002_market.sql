-- Instruments, their latest quotes and their daily history.

CREATE TABLE instruments (
    symbol      text PRIMARY KEY CHECK (symbol ~ '^[A-Z0-9][A-Z0-9.-]{0,11}$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '',
    sector      text NOT NULL DEFAULT '',
    currency    text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    active      boolean NOT NULL DEFAULT true
);

-- Ticker-prefix search (LIKE 'AA%') whatever the database's collation.
CREATE INDEX instruments_symbol_prefix ON instruments (symbol text_pattern_ops);

-- The price every trade and valuation uses: set by admins, the simulator, the replay
-- or the HTTP upstream, depending on the quote provider.
CREATE TABLE quotes (
    symbol         text PRIMARY KEY REFERENCES instruments (symbol) ON DELETE CASCADE,
    price          numeric NOT NULL CHECK (price > 0),
    previous_close numeric CHECK (previous_close > 0),
    as_of          timestamptz NOT NULL,
    source         text NOT NULL CHECK (source IN ('admin', 'simulated', 'replay', 'http'))
);

CREATE TABLE daily_bars (
    symbol   text NOT NULL REFERENCES instruments (symbol) ON DELETE CASCADE,
    day      date NOT NULL,
    open     numeric CHECK (open > 0),
    high     numeric CHECK (high > 0),
    low      numeric CHECK (low > 0),
    close    numeric NOT NULL CHECK (close > 0),
    volume   bigint NOT NULL DEFAULT 0 CHECK (volume >= 0),
    -- Corporate actions on that day: cash dividend per share, split ratio (4 = 4-for-1).
    dividend numeric NOT NULL DEFAULT 0 CHECK (dividend >= 0),
    split    numeric NOT NULL DEFAULT 1 CHECK (split > 0),
    PRIMARY KEY (symbol, day)
);

-- State of the simulated and replayed markets, shared by every server process.
CREATE TABLE market_clock (
    provider   text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    tick       bigint NOT NULL DEFAULT 0,
    -- Day (UTC) whose opening prices are the simulated previous closes.
    day        date
);

-- Each instrument's current price: its quote, or else its last daily close (with the
-- close before that as the previous close).
CREATE VIEW instrument_prices AS
SELECT i.symbol, i.name, i.description, i.sector, i.currency, i.active,
       coalesce(q.price, b.close) AS price,
       coalesce(q.previous_close, CASE WHEN q.symbol IS NULL THEN b.previous_close END) AS previous_close,
       coalesce(q.as_of, b.day::timestamptz) AS as_of
FROM instruments i
LEFT JOIN quotes q ON q.symbol = i.symbol
LEFT JOIN LATERAL (
    SELECT (array_agg(last.close ORDER BY last.day DESC))[1] AS close,
           (array_agg(last.close ORDER BY last.day DESC))[2] AS previous_close,
           max(last.day) AS day
    FROM (SELECT d.close, d.day FROM daily_bars d WHERE d.symbol = i.symbol ORDER BY d.day DESC LIMIT 2) last
) b ON q.symbol IS NULL;
