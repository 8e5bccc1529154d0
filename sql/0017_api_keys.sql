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

-- Under /v2 (the Alpaca-compatible API) accounts, orders and assets are known by UUIDs.
ALTER TABLE portfolios ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX portfolios_uuid ON portfolios (uuid);
ALTER TABLE instruments ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX instruments_uuid ON instruments (uuid);
ALTER TABLE orders ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid();
CREATE UNIQUE INDEX orders_uuid ON orders (uuid);
