-- Teams: in a team league (isolated only) the host makes teams; each team has one league
-- portfolio, held by the team's own account (a user row without a password that no one
-- logs in as), so the portfolio is valued, ranked and charted as any member's is. The
-- league's members are put on a team as traders (they trade its portfolio) or viewers.
-- Every order and trade records who placed it.
ALTER TABLE leagues
    ADD COLUMN teams boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT leagues_teams_isolated CHECK (NOT teams OR mode = 'isolated');

CREATE TABLE teams (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    league_id  bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    -- The team's account: its league portfolio's holder.
    account_id bigint NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- A team's name is unique in its league, whatever its case.
CREATE UNIQUE INDEX teams_name_key ON teams (league_id, lower(name));

CREATE TABLE team_members (
    league_id bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    team_id   bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id   bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role      text NOT NULL CHECK (role IN ('trader', 'viewer')),
    -- One team per member and league.
    PRIMARY KEY (league_id, user_id)
);
CREATE INDEX team_members_by_user ON team_members (user_id);
CREATE INDEX team_members_by_team ON team_members (team_id);

-- Who placed an order or a trade: the player (or bot) whose request it was. Kept when the
-- portfolio is a team's; null once that account is erased.
ALTER TABLE orders ADD COLUMN placed_by bigint REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE trades ADD COLUMN placed_by bigint REFERENCES users (id) ON DELETE SET NULL;
UPDATE orders SET placed_by = user_id;
UPDATE trades t SET placed_by = p.user_id FROM portfolios p WHERE p.id = t.portfolio_id;
CREATE INDEX trades_placed_by ON trades (placed_by) WHERE placed_by IS NOT NULL;
CREATE INDEX orders_placed_by ON orders (placed_by) WHERE placed_by IS NOT NULL;
