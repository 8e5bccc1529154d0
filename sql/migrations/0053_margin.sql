-- Margin, league rules set at creation (docs/trading.md, "Margin, interest and borrow
-- fees"): buying on margin (`margin_percent`, null: cash only), maintenance with a margin
-- call and forced sales (`maintenance_percent`), interest on borrowed and idle cash and
-- borrow fees on shorts, yearly rates charged at each market day's close.
ALTER TABLE leagues
    ADD COLUMN margin_percent numeric CHECK (margin_percent BETWEEN 25 AND 100),
    ADD COLUMN maintenance_percent numeric CHECK (maintenance_percent BETWEEN 10 AND 100),
    ADD COLUMN debit_rate_percent numeric NOT NULL DEFAULT 0 CHECK (debit_rate_percent BETWEEN 0 AND 50),
    ADD COLUMN credit_rate_percent numeric NOT NULL DEFAULT 0 CHECK (credit_rate_percent BETWEEN 0 AND 20),
    ADD COLUMN borrow_fee_percent numeric NOT NULL DEFAULT 0 CHECK (borrow_fee_percent BETWEEN 0 AND 100);

-- A league portfolio of a league that lends may hold negative cash (a loan), and its open
-- buys may hold back more than its cash; every other portfolio keeps both guards.
ALTER TABLE portfolios ADD COLUMN may_borrow boolean NOT NULL DEFAULT false;
ALTER TABLE portfolios DROP CONSTRAINT portfolios_cash_check;
ALTER TABLE portfolios ADD CONSTRAINT portfolios_cash_check CHECK (cash >= 0 OR may_borrow);
ALTER TABLE portfolios DROP CONSTRAINT portfolios_reserved_cash_check;
ALTER TABLE portfolios ADD CONSTRAINT portfolios_reserved_cash_check CHECK (reserved_cash >= 0 AND (reserved_cash <= cash OR may_borrow));

ALTER TABLE cash_movements DROP CONSTRAINT cash_movements_kind_check;
ALTER TABLE cash_movements ADD CONSTRAINT cash_movements_kind_check CHECK (kind IN (
    'starting_cash', 'reward', 'adjustment', 'dividend', 'cash_in_lieu', 'deposit', 'withdrawal', 'interest', 'borrow_fee'));

-- What a notification is about, where a client may act on it (margin_call, liquidated);
-- null for the others.
ALTER TABLE notifications ADD COLUMN kind text CHECK (kind ~ '^[a-z_]{1,40}$');
DROP FUNCTION IF EXISTS notify(bigint, text, text);

-- Each margin portfolio's close, once per market day (whatever the number of server
-- processes): the interest and fees charged, the equity and what maintenance required
-- then, whether that was a margin call, and when a call still standing at the next close
-- was met by forced sales.
CREATE TABLE margin_closes (
    portfolio_id  bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    day           date NOT NULL,
    interest      numeric NOT NULL DEFAULT 0,
    borrow_fee    numeric NOT NULL DEFAULT 0,
    equity        numeric NOT NULL,
    required      numeric NOT NULL,
    called        boolean NOT NULL,
    -- Set while a process sells the positions of a call not met (a lease), and once done.
    liquidating_until timestamptz,
    liquidated_at timestamptz,
    PRIMARY KEY (portfolio_id, day)
);
