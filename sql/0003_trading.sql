-- Holdings, the trade history and idempotency records.

-- Shares held. A holding sold down to zero stays as a row with quantity 0 (so a sale
-- is one conditional update, race-free) and is hidden from every view.
CREATE TABLE holdings (
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    symbol       text NOT NULL REFERENCES instruments (symbol),
    quantity     bigint NOT NULL CHECK (quantity >= 0),
    -- What the shares held cost, under the average-cost method.
    cost_basis   numeric NOT NULL CHECK (cost_basis >= 0),
    PRIMARY KEY (portfolio_id, symbol)
);

CREATE TABLE trades (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    symbol       text NOT NULL REFERENCES instruments (symbol),
    side         text NOT NULL CHECK (side IN ('buy', 'sell')),
    quantity     bigint NOT NULL CHECK (quantity > 0),
    price        numeric NOT NULL CHECK (price > 0),
    amount       numeric NOT NULL CHECK (amount > 0),
    fee          numeric NOT NULL DEFAULT 0 CHECK (fee >= 0),
    created_at   timestamptz NOT NULL DEFAULT now()
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
