-- The schema's tables, constraints, indexes and fixed data as of migration 0028, in one
-- file: a new database starts here. A database made by the earlier migrations 0001–0028
-- has all of it already; the migrator records this file for it in their place. Functions,
-- views and trigger functions are not here: each is one file under sql/functions,
-- sql/views or sql/triggers.

-- Accounts ---------------------------------------------------------------------------

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text NOT NULL CHECK (username ~ '^[A-Za-z0-9_.-]{3,32}$'),
    email         text CHECK (length(email) <= 254),
    password_hash text NOT NULL,
    role          text NOT NULL DEFAULT 'player' CHECK (role IN ('player', 'admin')),
    -- Bumped by logout and password change: tokens carrying an older version are refused.
    token_version integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Usernames are unique whatever their case.
CREATE UNIQUE INDEX users_username_key ON users (lower(username));

-- Throttle windows: one row per budget key ("login:user:<sha-256 of the lower-cased
-- username>", "login:addr:<address>", "login:all", "register:addr:<address>"), counting
-- attempts in a fixed window. Attempts are counted before the work they guard (a password
-- check), by one conditional upsert, so a burst cannot get past the limit.
CREATE TABLE throttle_windows (
    key            text PRIMARY KEY CHECK (octet_length(key) BETWEEN 1 AND 100),
    window_start   timestamptz NOT NULL,
    window_seconds integer NOT NULL CHECK (window_seconds > 0),
    hits           integer NOT NULL CHECK (hits >= 0)
);

CREATE INDEX throttle_windows_window_start ON throttle_windows (window_start);

-- Portfolios --------------------------------------------------------------------------

-- A user's personal portfolio has no league and is not a practice portfolio; a league
-- portfolio belongs to an isolated league; practice portfolios are a user's own, never
-- ranked. A league portfolio whose member left, was kicked, or whose league was deleted
-- keeps its history but is archived: no longer listed, tradable or ranked.
CREATE TABLE portfolios (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    league_id     bigint,
    name          text NOT NULL,
    cash          numeric NOT NULL CHECK (cash >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    archived_at   timestamptz,
    -- Money paid in (Σ cash movements but income), kept by the trigger count_paid_in.
    paid_in       numeric NOT NULL DEFAULT 0,
    -- What the portfolio's open orders hold back.
    reserved_cash numeric NOT NULL DEFAULT 0,
    -- How /v2 (the Alpaca-compatible API) names the account.
    uuid          uuid NOT NULL DEFAULT gen_random_uuid(),
    practice      boolean NOT NULL DEFAULT false,
    -- The currency its figures are shown in by default.
    base_currency text NOT NULL DEFAULT 'USD' CHECK (base_currency ~ '^[A-Z]{3}$'),
    -- The currency its cash (and so its cost basis, fees and gains) is held in.
    cash_currency text NOT NULL DEFAULT 'USD' CHECK (cash_currency ~ '^[A-Z]{3}$'),
    CONSTRAINT portfolios_reserved_cash_check CHECK (reserved_cash >= 0 AND reserved_cash <= cash),
    CONSTRAINT portfolios_practice_has_no_league CHECK (NOT practice OR league_id IS NULL)
);

CREATE UNIQUE INDEX portfolios_personal_key ON portfolios (user_id) WHERE league_id IS NULL AND NOT practice;
CREATE UNIQUE INDEX portfolios_league_member_key ON portfolios (league_id, user_id)
    WHERE league_id IS NOT NULL AND archived_at IS NULL;
CREATE UNIQUE INDEX portfolios_uuid ON portfolios (uuid);
CREATE INDEX portfolios_practice ON portfolios (user_id) WHERE practice;

-- Every change of cash that is not a trade, so cash can be rebuilt from history alone.
-- Dividends and cash in lieu of fractional shares are income, not money paid in.
CREATE TABLE cash_movements (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    kind         text NOT NULL,
    amount       numeric NOT NULL,
    note         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT cash_movements_kind_check
        CHECK (kind IN ('starting_cash', 'reward', 'adjustment', 'dividend', 'cash_in_lieu', 'deposit', 'withdrawal'))
);

CREATE INDEX cash_movements_portfolio_id ON cash_movements (portfolio_id, id DESC);

-- Market --------------------------------------------------------------------------------

CREATE TABLE instruments (
    symbol      text PRIMARY KEY CHECK (symbol ~ '^[A-Z0-9][A-Z0-9.-]{0,11}$'),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text NOT NULL DEFAULT '',
    sector      text NOT NULL DEFAULT '',
    currency    text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    active      boolean NOT NULL DEFAULT true,
    uuid        uuid NOT NULL DEFAULT gen_random_uuid()
);

-- Ticker-prefix search (LIKE 'AA%') whatever the database's collation.
CREATE INDEX instruments_symbol_prefix ON instruments (symbol text_pattern_ops);
CREATE UNIQUE INDEX instruments_uuid ON instruments (uuid);

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

-- Intraday bars for /v2/stocks/bars, kept seven days: the trigger minute_bar_tick keeps
-- them. `ticks` counts the price changes (Alpaca's trade count `n`; the game has no volume).
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

-- State of the simulated and replayed markets, shared by every server process.
CREATE TABLE market_clock (
    provider   text PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    tick       bigint NOT NULL DEFAULT 0,
    -- The market's day (MarketClock) whose opening prices are the simulated previous closes.
    day        date
);

-- Trading -------------------------------------------------------------------------------

-- Shares held. A holding sold down to zero stays as a row with quantity 0 (so a sale is
-- one conditional update, race-free) and is hidden from every view. A short position (in
-- a league that allows it: the trigger refuse_short_unless_allowed) has a negative
-- quantity and a negative cost basis (minus what the shares were sold for), so average
-- cost = cost_basis / quantity is the entry price and value − cost_basis the gain.
CREATE TABLE holdings (
    portfolio_id      bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    symbol            text NOT NULL REFERENCES instruments (symbol),
    quantity          bigint NOT NULL,
    -- What the shares held cost, under the average-cost method.
    cost_basis        numeric NOT NULL,
    -- What the open orders hold back.
    reserved_quantity bigint NOT NULL DEFAULT 0,
    -- The portfolio's cash currency, set on insert (the trigger holding_currency), so
    -- valuing holdings needs no join to portfolios.
    cash_currency     text NOT NULL DEFAULT 'USD',
    PRIMARY KEY (portfolio_id, symbol),
    CONSTRAINT holdings_cost_basis_check CHECK (sign(cost_basis) * sign(quantity) >= 0),
    CONSTRAINT holdings_reserved_quantity_check CHECK (reserved_quantity >= 0 AND reserved_quantity <= greatest(quantity, 0))
);

CREATE TABLE trades (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portfolio_id  bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    symbol        text NOT NULL REFERENCES instruments (symbol),
    side          text NOT NULL CHECK (side IN ('buy', 'sell')),
    quantity      bigint NOT NULL CHECK (quantity > 0),
    price         numeric NOT NULL CHECK (price > 0),
    amount        numeric NOT NULL CHECK (amount > 0),
    fee           numeric NOT NULL DEFAULT 0 CHECK (fee >= 0),
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- For a sale: the proceeds after the fee minus the average cost of the shares sold.
    realized_gain numeric,
    -- Units of the portfolio's currency one dollar of the fill cost or brought (spread
    -- included); NULL for a fill in dollars.
    fx_rate       numeric CHECK (fx_rate > 0)
);

CREATE INDEX trades_portfolio_id ON trades (portfolio_id, id DESC);
CREATE INDEX trades_portfolio_symbol_id ON trades (portfolio_id, symbol, id DESC);

-- The first outcome of each (user, Idempotency-Key): a trade, or the error it met.
CREATE TABLE idempotency_keys (
    user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash text NOT NULL,
    outcome      text NOT NULL,
    trade_id     bigint REFERENCES trades (id) ON DELETE SET NULL,
    cash         numeric,
    position     bigint,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);

CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Orders: every trade is the fill of an order, and limit, stop and stop-limit orders rest
-- until the price crosses them. An open order reserves what its fill may need (cash for a
-- buy, shares for a sale) on the portfolio or holding itself, so the checks make the
-- database refuse any interleaving of orders and trades that would overspend. A plain
-- market trade is its own record: a filled market order without an `orders` row. Orders
-- take their ids from the trades' sequence, so an order id names either an `orders` row
-- or such a trade, never both; the view order_book shows them as one list. Replacing an
-- open order closes it as `replaced` and names its successor, which names it back.
CREATE TABLE orders (
    id                bigint PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('trades', 'id')),
    -- The portfolio's owner, kept for lookups by client order id (the portfolio's foreign
    -- key already removes orders with their owner).
    user_id           bigint NOT NULL,
    portfolio_id      bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    -- The client's own name for the order: unique per user, it makes submission idempotent.
    client_order_id   text CHECK (length(client_order_id) BETWEEN 1 AND 128),
    request_hash      text,
    symbol            text NOT NULL REFERENCES instruments (symbol),
    side              text NOT NULL CHECK (side IN ('buy', 'sell')),
    type              text NOT NULL CHECK (type IN ('market', 'limit', 'stop', 'stop_limit')),
    time_in_force     text NOT NULL CHECK (time_in_force IN ('day', 'gtc', 'ioc', 'fok')),
    quantity          bigint NOT NULL CHECK (quantity > 0),
    limit_price       numeric CHECK (limit_price > 0),
    stop_price        numeric CHECK (stop_price > 0),
    status            text NOT NULL DEFAULT 'new'
        CHECK (status IN ('new', 'filled', 'canceled', 'expired', 'rejected', 'replaced')),
    -- What the open order holds back; released (zero) once it is no longer open.
    reserved_cash     numeric NOT NULL DEFAULT 0 CHECK (reserved_cash >= 0),
    reserved_quantity bigint NOT NULL DEFAULT 0 CHECK (reserved_quantity >= 0),
    trade_id          bigint UNIQUE REFERENCES trades (id),
    -- When a stop-limit order's stop was crossed (it is a limit order from then on).
    triggered_at      timestamptz,
    -- A day order's session close, or its league's end.
    expires_at        timestamptz,
    reject_reason     text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    filled_at         timestamptz,
    canceled_at       timestamptz,
    expired_at        timestamptz,
    uuid              uuid NOT NULL DEFAULT gen_random_uuid(),
    replaces          bigint UNIQUE REFERENCES orders (id),
    replaced_by       bigint UNIQUE REFERENCES orders (id),
    replaced_at       timestamptz,
    CONSTRAINT orders_limit_price_needed CHECK ((type IN ('limit', 'stop_limit')) = (limit_price IS NOT NULL)),
    CONSTRAINT orders_stop_price_needed CHECK ((type IN ('stop', 'stop_limit')) = (stop_price IS NOT NULL)),
    CONSTRAINT orders_released_when_closed CHECK (status = 'new' OR (reserved_cash = 0 AND reserved_quantity = 0)),
    CONSTRAINT orders_filled_with_trade CHECK ((status = 'filled') = (trade_id IS NOT NULL)),
    CONSTRAINT orders_replaced_by_only_when_replaced CHECK (replaced_by IS NULL OR status = 'replaced'),
    CONSTRAINT orders_replaced_at_when_replaced CHECK ((status = 'replaced') = (replaced_at IS NOT NULL))
);

CREATE UNIQUE INDEX orders_client_order_id ON orders (user_id, client_order_id) WHERE client_order_id IS NOT NULL;
CREATE INDEX orders_portfolio_id ON orders (portfolio_id, id DESC);
-- The matcher's and the expiry's work lists: open orders only.
CREATE INDEX orders_open_symbol ON orders (symbol, id) WHERE status = 'new';
CREATE INDEX orders_open_expiry ON orders (expires_at) WHERE status = 'new' AND expires_at IS NOT NULL;
CREATE UNIQUE INDEX orders_uuid ON orders (uuid);

-- Leagues -------------------------------------------------------------------------------

-- League rules (commissions, short selling, position limits, the order types and symbols
-- allowed, the currency and its spread) are set at creation and apply to the league's
-- own (isolated) portfolios. A NULL flat commission means the server's (TRADE_FEE).
CREATE TABLE leagues (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    -- Case-sensitive join code from a cryptographic random source.
    code                 text NOT NULL UNIQUE CHECK (length(code) >= 8),
    owner_id             bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mode                 text NOT NULL DEFAULT 'shared' CHECK (mode IN ('shared', 'isolated')),
    starting_cash        numeric NOT NULL CHECK (starting_cash > 0),
    starts_at            timestamptz NOT NULL,
    ends_at              timestamptz CHECK (ends_at > starts_at),
    max_members          integer CHECK (max_members > 0),
    -- Kept with every join and leave; the check makes max_members hold under any concurrency.
    member_count         integer NOT NULL DEFAULT 0 CHECK (member_count >= 0 AND member_count <= coalesce(max_members, member_count)),
    created_at           timestamptz NOT NULL DEFAULT now(),
    -- When the league's end was processed: final standings frozen, members notified.
    finished_at          timestamptz,
    commission_flat      numeric CHECK (commission_flat >= 0 AND commission_flat <= 1000000),
    commission_percent   numeric NOT NULL DEFAULT 0 CHECK (commission_percent >= 0 AND commission_percent <= 10),
    allow_short_selling  boolean NOT NULL DEFAULT false,
    short_margin_percent numeric NOT NULL DEFAULT 150
        CHECK (short_margin_percent >= 100 AND short_margin_percent <= 1000),
    max_position_percent numeric NOT NULL DEFAULT 100
        CHECK (max_position_percent > 0 AND max_position_percent <= 100),
    allowed_order_types  text[] NOT NULL DEFAULT '{market,limit,stop,stop_limit}'
        CHECK (cardinality(allowed_order_types) >= 1 AND allowed_order_types <@ '{market,limit,stop,stop_limit}'),
    allowed_symbols      text[] CHECK (cardinality(allowed_symbols) BETWEEN 1 AND 1000),
    currency             text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    -- What a fill pays over (a buy) or gets under (a sale) the rate now, in percent.
    fx_spread_percent    numeric NOT NULL DEFAULT 0 CHECK (fx_spread_percent BETWEEN 0 AND 10),
    CONSTRAINT leagues_currency_isolated CHECK (currency = 'USD' OR mode = 'isolated')
);

CREATE INDEX leagues_unfinished_ends_at ON leagues (ends_at) WHERE finished_at IS NULL AND ends_at IS NOT NULL;

CREATE TABLE league_members (
    league_id bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (league_id, user_id)
);

CREATE INDEX league_members_user_id ON league_members (user_id);

-- Users kicked from a league, who may not join it again.
CREATE TABLE league_bans (
    league_id bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (league_id, user_id)
);

-- Standings as last computed for big leagues (refreshed every few seconds) and for
-- finished leagues (frozen at the end). No foreign key: a refresh writes every member's
-- row, and checking the league for each costs more than the rest of the insert;
-- LeagueStore.delete removes a league's rows.
CREATE TABLE league_standings (
    league_id      bigint NOT NULL,
    place          bigint NOT NULL,
    rank           bigint NOT NULL,
    user_id        bigint NOT NULL,
    username       text NOT NULL,
    net_worth      numeric NOT NULL,
    cash           numeric NOT NULL,
    holdings_value numeric NOT NULL,
    paid_in        numeric NOT NULL,
    PRIMARY KEY (league_id, place)
);

CREATE TABLE league_snapshots (
    league_id bigint PRIMARY KEY REFERENCES leagues (id) ON DELETE CASCADE,
    taken_at  timestamptz NOT NULL,
    members   integer NOT NULL
);

-- Each member's rank and net worth once a day, so clients can draw movement.
CREATE TABLE league_rank_history (
    league_id bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day       date NOT NULL,
    rank      bigint NOT NULL,
    net_worth numeric NOT NULL,
    PRIMARY KEY (league_id, user_id, day)
);

CREATE INDEX league_rank_history_day ON league_rank_history (league_id, day);

-- Notifications -------------------------------------------------------------------------

-- Notifications to one user, or to everyone (user_id NULL: an admin broadcast).
CREATE TABLE notifications (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint REFERENCES users (id) ON DELETE CASCADE,
    title      text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body       text NOT NULL CHECK (length(body) <= 2000),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX notifications_user_id ON notifications (user_id, id DESC);

-- When each user read each notification (broadcasts are read per user too).
CREATE TABLE notification_reads (
    notification_id bigint NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
    user_id         bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    read_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, user_id)
);

-- Achievements --------------------------------------------------------------------------

CREATE TABLE achievements (
    code        text PRIMARY KEY,
    position    integer NOT NULL UNIQUE,
    name        text NOT NULL,
    description text NOT NULL,
    reward      numeric NOT NULL CHECK (reward >= 0),
    -- What `progress` counts towards (1 for yes/no achievements).
    target      integer NOT NULL DEFAULT 1 CHECK (target > 0)
);

INSERT INTO achievements (code, position, name, description, reward, target) VALUES
    ('first_trade',    1, 'First trade',      'Buy or sell a stock for the first time.',                          100.00, 1),
    ('first_profit',   2, 'In the green',     'Sell shares for more than they cost you, after fees.',             250.00, 1),
    ('ten_trades',     3, 'Active trader',    'Make ten trades.',                                                 500.00, 10),
    ('diversified',    4, 'Diversified',      'Hold five different stocks at once in one portfolio.',             500.00, 5),
    ('joined_league',  5, 'Team player',      'Join a league with its code.',                                     250.00, 1),
    ('created_league', 6, 'League founder',   'Create a league.',                                                 250.00, 1),
    ('up_fifty',       7, 'Up fifty percent', 'Grow a portfolio to 1.5 times the money paid into it.',           2500.00, 1),
    ('podium',         8, 'On the podium',    'Finish a league of at least three players in the top three.',    1000.00, 1);

CREATE TABLE user_achievements (
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code      text NOT NULL REFERENCES achievements (code),
    earned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, code)
);

-- Corporate actions ---------------------------------------------------------------------

-- Splits and dividends as events: read from the daily bars' `split` and `dividend`
-- columns when prices are seeded or uploaded, or entered by admins. Adjusted history is
-- computed from these rows (never from a vendor's adjusted close), so an admin's action
-- adjusts charts too.
CREATE TABLE corporate_actions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    symbol         text NOT NULL REFERENCES instruments (symbol) ON DELETE CASCADE,
    ex_date        date NOT NULL,
    kind           text NOT NULL CHECK (kind IN ('split', 'dividend')),
    -- New shares per old share: 4 is a 4-for-1 split, 0.5 a 1-for-2 reverse split.
    ratio          numeric CHECK (ratio > 0 AND ratio <= 1000000),
    -- Cash per share.
    amount         numeric CHECK (amount >= 0 AND amount <= 1000000),
    source         text NOT NULL CHECK (source IN ('prices', 'admin')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- When every holder had the action applied. An action whose ex-date was already past
    -- when it was recorded (history loaded with prices) is never applied, except by a
    -- replay that starts before it.
    applied_at     timestamptz,
    -- Whether the stored quote of the symbol was divided by a split's ratio (once): quotes
    -- an admin or the simulated market set do not know about the split; replayed and
    -- fetched quotes already do.
    quote_adjusted boolean NOT NULL DEFAULT false,
    CONSTRAINT corporate_actions_ratio_or_amount CHECK ((kind = 'split') = (ratio IS NOT NULL) AND (kind = 'dividend') = (amount IS NOT NULL)),
    -- One action of each kind per symbol and day: loading the same prices again adds nothing.
    CONSTRAINT corporate_actions_once UNIQUE (symbol, ex_date, kind)
);

CREATE INDEX corporate_actions_pending ON corporate_actions (ex_date) WHERE applied_at IS NULL;

-- Each action applied to each portfolio once, recorded, so a restart, a second server
-- process or a replayed day never applies it twice. A back-dated fill's catch-up names
-- its trade; the processor's (the whole position) names none.
CREATE TABLE corporate_action_applications (
    action_id       bigint NOT NULL REFERENCES corporate_actions (id) ON DELETE CASCADE,
    portfolio_id    bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    -- The position before and after (a split), and the cash paid or received.
    quantity_before bigint NOT NULL,
    quantity_after  bigint NOT NULL,
    cash            numeric NOT NULL DEFAULT 0,
    applied_at      timestamptz NOT NULL DEFAULT now(),
    trade_id        bigint REFERENCES trades (id) ON DELETE CASCADE,
    CONSTRAINT corporate_action_applications_once UNIQUE NULLS NOT DISTINCT (action_id, portfolio_id, trade_id)
);

CREATE INDEX corporate_action_applications_portfolio ON corporate_action_applications (portfolio_id, applied_at DESC);

-- Live stream ---------------------------------------------------------------------------

-- Stream payloads over NOTIFY's 8,000-byte limit, announced by id (stream_publish).
CREATE TABLE stream_payloads (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payload    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Bots ----------------------------------------------------------------------------------

-- Keys that bots use instead of a login (Alpaca's APCA-API-KEY-ID / APCA-API-SECRET-KEY
-- headers), each bound to one portfolio of its owner. The secret is 40 random characters
-- (about 238 bits), shown once; only its SHA-256 is kept, which is enough for a secret
-- nobody chose (no dictionary to try). Deleting a row revokes the key.
CREATE TABLE api_keys (
    key_id       text PRIMARY KEY CHECK (key_id ~ '^PK[A-Z0-9]{18}$'),
    secret_hash  bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
    user_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '' CHECK (char_length(name) <= 64),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);

CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);

-- Analytics -----------------------------------------------------------------------------

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

-- Currencies ----------------------------------------------------------------------------

-- Daily exchange rates in the European Central Bank's form: units of a currency per one
-- euro on each business day it published (`mockstock seed --fx`, `POST /api/admin/fx`).
-- Any pair is derived through the euro (fx_rate).
CREATE TABLE fx_rates (
    currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'EUR'),
    day      date NOT NULL,
    per_euro numeric NOT NULL CHECK (per_euro > 0),
    PRIMARY KEY (currency, day)
);

-- Exchange rates now, as `quotes` holds stock prices now: units of a currency per one
-- euro as the quote provider last set them (walked by the simulated market, fetched by
-- the http provider). A currency without a rate here is worth its latest reference rate.
CREATE TABLE fx_quotes (
    currency text PRIMARY KEY CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'EUR'),
    per_euro numeric NOT NULL CHECK (per_euro > 0),
    as_of    timestamptz NOT NULL,
    source   text NOT NULL
);
