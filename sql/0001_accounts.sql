-- Players and admins, their personal portfolios, and the cash movements that fund them.

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

-- A user's personal portfolio has no league; league portfolios (a later migration) do.
CREATE TABLE portfolios (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    league_id  bigint,
    name       text NOT NULL,
    cash       numeric NOT NULL CHECK (cash >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX portfolios_personal_key ON portfolios (user_id) WHERE league_id IS NULL;

-- Every change of cash that is not a trade, so cash can be rebuilt from history alone.
CREATE TABLE cash_movements (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    kind         text NOT NULL CHECK (kind IN ('starting_cash', 'reward', 'adjustment')),
    amount       numeric NOT NULL,
    note         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX cash_movements_portfolio_id ON cash_movements (portfolio_id, id DESC);

-- Failed logins per lower-cased username in the current one-minute window.
CREATE TABLE login_failures (
    username_key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    failures     integer NOT NULL
);
