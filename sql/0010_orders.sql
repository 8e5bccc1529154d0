-- Orders: every trade is the fill of an order, and limit, stop and stop-limit orders rest
-- until the price crosses them. An open order reserves what its fill may need (cash for
-- a buy, shares for a sale) on the portfolio or holding itself, so the checks below make
-- the database refuse any interleaving of orders and trades that would overspend.
--
-- A plain market trade (`POST /api/stock/buy|sell`) is its own record: it is a filled
-- market order without an `orders` row, so the hottest statement writes nothing more
-- than it did before orders existed. Orders take their ids from the trades' sequence, so
-- an order id names either an `orders` row or such a trade, never both; the view
-- `order_book` shows them as one list.

ALTER TABLE portfolios ADD COLUMN reserved_cash numeric NOT NULL DEFAULT 0,
    ADD CONSTRAINT portfolios_reserved_cash_check CHECK (reserved_cash >= 0 AND reserved_cash <= cash);

ALTER TABLE holdings ADD COLUMN reserved_quantity bigint NOT NULL DEFAULT 0,
    ADD CONSTRAINT holdings_reserved_quantity_check CHECK (reserved_quantity >= 0 AND reserved_quantity <= quantity);

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
    status            text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'filled', 'canceled', 'expired', 'rejected')),
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
    CONSTRAINT orders_limit_price_needed CHECK ((type IN ('limit', 'stop_limit')) = (limit_price IS NOT NULL)),
    CONSTRAINT orders_stop_price_needed CHECK ((type IN ('stop', 'stop_limit')) = (stop_price IS NOT NULL)),
    CONSTRAINT orders_released_when_closed CHECK (status = 'new' OR (reserved_cash = 0 AND reserved_quantity = 0)),
    CONSTRAINT orders_filled_with_trade CHECK ((status = 'filled') = (trade_id IS NOT NULL))
);

CREATE UNIQUE INDEX orders_client_order_id ON orders (user_id, client_order_id) WHERE client_order_id IS NOT NULL;
CREATE INDEX orders_portfolio_id ON orders (portfolio_id, id DESC);
-- The matcher's and the expiry's work lists: open orders only.
CREATE INDEX orders_open_symbol ON orders (symbol, id) WHERE status = 'new';
CREATE INDEX orders_open_expiry ON orders (expires_at) WHERE status = 'new' AND expires_at IS NOT NULL;

-- Every order as clients see it: the orders, and the plain market trades that are their
-- own filled market orders.
CREATE VIEW order_book AS
SELECT o.id, o.user_id, o.portfolio_id, o.client_order_id, o.request_hash, o.symbol, o.side, o.type, o.time_in_force,
       o.quantity, o.limit_price, o.stop_price, o.status, t.price AS fill_price, o.trade_id, o.created_at, o.updated_at,
       o.filled_at, o.canceled_at, o.expired_at, o.reject_reason
FROM orders o LEFT JOIN trades t ON t.id = o.trade_id
UNION ALL
SELECT t.id, p.user_id, t.portfolio_id, NULL, NULL, t.symbol, t.side, 'market', 'day',
       t.quantity, NULL, NULL, 'filled', t.price, t.id, t.created_at, t.created_at,
       t.created_at, NULL, NULL, NULL
FROM trades t JOIN portfolios p ON p.id = t.portfolio_id
WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.trade_id = t.id);
