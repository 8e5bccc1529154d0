-- Bot players: a bot is a player account that another player owns (bot_owner_id). It has
-- no password, so it never logs in, and trades only through its API keys. A league's bot
-- policy says whether bots play in it, and standings mark bots and rank humans and bots
-- apart as well as together.
ALTER TABLE users ADD COLUMN bot_owner_id bigint REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE users ADD CONSTRAINT users_bot_is_a_player CHECK (bot_owner_id IS NULL OR (role = 'player' AND password_hash = ''));
ALTER TABLE users ADD CONSTRAINT users_bot_not_its_own CHECK (bot_owner_id <> id);
CREATE INDEX users_bots ON users (bot_owner_id, id) WHERE bot_owner_id IS NOT NULL;

ALTER TABLE leagues ADD COLUMN bots text NOT NULL DEFAULT 'allowed' CHECK (bots IN ('allowed', 'separate', 'forbidden'));

-- The columns league_standings_live now returns after the others: whether the member is
-- a bot, its owner's name, and its place and rank among its own kind (humans or bots).
DROP FUNCTION IF EXISTS league_standings_live(bigint);
ALTER TABLE league_standings ADD COLUMN bot boolean NOT NULL DEFAULT false, ADD COLUMN owner_username text,
    ADD COLUMN group_place bigint, ADD COLUMN group_rank bigint;
-- Every member of a league finished before bots existed was human.
UPDATE league_standings SET group_place = place, group_rank = rank;
ALTER TABLE league_standings ALTER COLUMN group_place SET NOT NULL, ALTER COLUMN group_rank SET NOT NULL;
CREATE UNIQUE INDEX league_standings_by_kind ON league_standings (league_id, bot, group_place);

-- Running leagues' snapshots are a cache: dropped, and taken afresh with the new columns.
DELETE FROM league_live_standings;
DELETE FROM league_live_snapshots;
ALTER TABLE league_live_standings ADD COLUMN bot boolean NOT NULL DEFAULT false, ADD COLUMN owner_username text,
    ADD COLUMN group_place bigint NOT NULL, ADD COLUMN group_rank bigint NOT NULL;
CREATE UNIQUE INDEX league_live_standings_by_kind ON league_live_standings (league_id, bot, group_place);
