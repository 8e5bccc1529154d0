-- The value rules of trade rows and of a portfolio's currencies as domains. PostgreSQL
-- parses and plans a table's CHECK constraints again in every statement that writes the
-- table (all of them, whichever columns change), which cost a tenth of a trade's database
-- time; a domain's rule is prepared once per connection and checked only when a value is
-- assigned to the column. The rules themselves are unchanged. The cross-column and
-- per-trade rules (cash never below zero, reservations within what is held, the league
-- of a league portfolio) stay table checks.
CREATE DOMAIN trade_side AS text CHECK (VALUE IN ('buy', 'sell'));
CREATE DOMAIN positive_quantity AS bigint CHECK (VALUE > 0);
CREATE DOMAIN positive_amount AS numeric CHECK (VALUE > 0);
CREATE DOMAIN nonnegative_amount AS numeric CHECK (VALUE >= 0);
CREATE DOMAIN currency_code AS text CHECK (VALUE ~ '^[A-Z]{3}$');

-- The views that read these columns; the files in views/ make them again after the
-- migrations.
DROP VIEW IF EXISTS activities, order_book CASCADE;

ALTER TABLE trades
    DROP CONSTRAINT trades_side_check, DROP CONSTRAINT trades_quantity_check, DROP CONSTRAINT trades_price_check,
    DROP CONSTRAINT trades_amount_check, DROP CONSTRAINT trades_fee_check, DROP CONSTRAINT trades_fx_rate_check,
    ALTER side TYPE trade_side, ALTER quantity TYPE positive_quantity, ALTER price TYPE positive_amount,
    ALTER amount TYPE positive_amount, ALTER fee TYPE nonnegative_amount, ALTER fx_rate TYPE positive_amount;

ALTER TABLE portfolios
    DROP CONSTRAINT portfolios_base_currency_check, DROP CONSTRAINT portfolios_cash_currency_check,
    ALTER base_currency TYPE currency_code, ALTER cash_currency TYPE currency_code;
