-- The minimal trade scripts/bench-trade measures the server against: the same three
-- writes as a trade (cash, holding, trade row) on plain tables with no triggers, foreign
-- keys or checks beyond the primary keys, in a schema of its own. Buys and sales both
-- write the account first, as the server's statements lock the portfolio first: the other
-- order deadlocks a buy against a sale of the same account. Every account holds 1,000
-- shares of each symbol, which a run never sells out.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS minimal CASCADE;
CREATE SCHEMA minimal;
CREATE TABLE minimal.accounts (id bigint PRIMARY KEY, cash numeric NOT NULL);
CREATE TABLE minimal.holdings (
    account_id bigint NOT NULL, symbol text NOT NULL, quantity bigint NOT NULL, cost_basis numeric NOT NULL,
    PRIMARY KEY (account_id, symbol)
);
CREATE TABLE minimal.trades (
    id bigserial PRIMARY KEY, account_id bigint NOT NULL, symbol text NOT NULL, side text NOT NULL,
    quantity bigint NOT NULL, price numeric NOT NULL, amount numeric NOT NULL, created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO minimal.accounts SELECT id, 1000000 FROM generate_series(:first, :last) id;
INSERT INTO minimal.holdings SELECT a, 'S' || s, 1000, 100000 FROM generate_series(:first, :last) a, generate_series(1, :symbols) s;
ANALYZE minimal.accounts, minimal.holdings, minimal.trades;
