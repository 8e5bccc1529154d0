-- Scenario leagues (docs/leagues.md, "Scenario leagues"): an isolated league with a market
-- of its own, replaying a window of stored daily history on the league's clock.
--
-- Each of the league's instruments is an instrument of its own, `SYMBOL@LEAGUE` (the
-- symbol it is shown as, then the league's id), with its own quote and daily bars: so
-- holdings, orders, valuations, standings and charts treat it as any instrument, and no
-- other portfolio can name it (a symbol a client sends never holds '@'). Answers show
-- the part before '@' (Symbol.shown). `league_id` is kept when the league is deleted:
-- its archived portfolios still hold the instruments.
ALTER TABLE instruments ADD COLUMN league_id bigint;
ALTER TABLE instruments DROP CONSTRAINT instruments_symbol_check;
ALTER TABLE instruments ADD CONSTRAINT instruments_symbol_check
    CHECK (symbol ~ '^[A-Z0-9][A-Z0-9.-]{0,11}(@[1-9][0-9]{0,17})?$');
ALTER TABLE instruments ADD CONSTRAINT instruments_league_symbol
    CHECK (CASE WHEN league_id IS NULL THEN strpos(symbol, '@') = 0 ELSE symbol LIKE '%@' || league_id END);
CREATE INDEX instruments_by_league ON instruments (league_id) WHERE league_id IS NOT NULL;

-- A league's market: the window [from_day, to_day] of stored history, its trading days
-- (`real_days`, day k of the league being real_days[k]), the dates the league's bars are
-- stamped with (`bar_days`, one trading day per league day from the league's start, so a
-- blind league's charts hold no date of the period), and the league day now.
-- `day_minutes`: a league day passes every that many minutes from the league's start;
-- null, only when the host advances it. `day` only grows, by a conditional update.
CREATE TABLE league_markets (
    league_id   bigint PRIMARY KEY REFERENCES leagues (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('replay')),
    from_day    date NOT NULL,
    to_day      date NOT NULL CHECK (to_day >= from_day),
    day_minutes integer CHECK (day_minutes BETWEEN 1 AND 1440),
    blind       boolean NOT NULL,
    real_days   date[] NOT NULL CHECK (cardinality(real_days) >= 2),
    bar_days    date[] NOT NULL CHECK (cardinality(bar_days) = cardinality(real_days)),
    day         integer NOT NULL DEFAULT 0,
    advanced_at timestamptz NOT NULL DEFAULT now(),
    -- When each league day began (day_starts[k]): the day a trade or cash movement belongs
    -- to (league_day_of).
    day_starts  timestamptz[] NOT NULL DEFAULT '{}' CHECK (cardinality(day_starts) = day),
    -- 0 only inside the transaction that creates the league, before its first prices.
    CONSTRAINT league_markets_day_in_window CHECK (day BETWEEN 0 AND cardinality(real_days))
);

-- The league's instruments: each replays `real_symbol`, its prices multiplied by `base`
-- (100 over its day-1 close in a blind league, else 1). `alias` numbers a blind league's
-- instruments (S01, S02, …) in an order that says nothing of the real symbols.
CREATE TABLE league_instruments (
    league_id   bigint NOT NULL REFERENCES league_markets (league_id) ON DELETE CASCADE,
    symbol      text NOT NULL UNIQUE REFERENCES instruments (symbol),
    real_symbol text NOT NULL REFERENCES instruments (symbol),
    base        numeric NOT NULL CHECK (base > 0),
    PRIMARY KEY (league_id, real_symbol)
);

-- Shocks the host scripts: from the start of league day `day`, the quotes of `symbols`
-- (the league's instruments; null, all of them) are multiplied by (1 + change_percent/100),
-- and the headline is posted as league news (`news_id`) when the league reaches that day.
CREATE TABLE league_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    league_id      bigint NOT NULL REFERENCES league_markets (league_id) ON DELETE CASCADE,
    day            integer NOT NULL CHECK (day >= 2),
    symbols        text[] CHECK (cardinality(symbols) BETWEEN 1 AND 1000),
    change_percent numeric NOT NULL CHECK (change_percent BETWEEN -90 AND 500),
    headline       text NOT NULL CHECK (length(headline) BETWEEN 1 AND 120),
    body           text CHECK (length(body) BETWEEN 1 AND 2000),
    created_at     timestamptz NOT NULL DEFAULT now(),
    news_id        bigint REFERENCES league_news (id) ON DELETE SET NULL,
    applied_at     timestamptz
);
CREATE INDEX league_events_by_day ON league_events (league_id, day);

-- A scenario league's quotes are stored by its market's advance.
ALTER TABLE quotes DROP CONSTRAINT quotes_source_check;
ALTER TABLE quotes ADD CONSTRAINT quotes_source_check CHECK (source IN ('admin', 'simulated', 'replay', 'http', 'league'));
