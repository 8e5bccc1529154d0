-- Leagues, their members and bans; league portfolios are archived, never deleted.

CREATE TABLE leagues (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    -- Case-sensitive join code from a cryptographic random source.
    code          text NOT NULL UNIQUE CHECK (length(code) >= 8),
    owner_id      bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mode          text NOT NULL DEFAULT 'shared' CHECK (mode IN ('shared', 'isolated')),
    starting_cash numeric NOT NULL CHECK (starting_cash > 0),
    starts_at     timestamptz NOT NULL,
    ends_at       timestamptz CHECK (ends_at > starts_at),
    max_members   integer CHECK (max_members > 0),
    -- Kept with every join and leave; the check makes max_members hold under any concurrency.
    member_count  integer NOT NULL DEFAULT 0 CHECK (member_count >= 0 AND member_count <= coalesce(max_members, member_count)),
    created_at    timestamptz NOT NULL DEFAULT now()
);

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

-- A league portfolio whose member left, was kicked, or whose league was deleted keeps
-- its history but is archived: no longer listed, tradable or ranked.
ALTER TABLE portfolios ADD COLUMN archived_at timestamptz;
CREATE UNIQUE INDEX portfolios_league_member_key ON portfolios (league_id, user_id)
    WHERE league_id IS NOT NULL AND archived_at IS NULL;
