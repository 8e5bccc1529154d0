-- A big running league's standings are a cache of league_standings_live, rewritten every
-- few seconds: as logged rows, each refresh of 100,000 members wrote 20 MiB of WAL
-- (and shipped it to every standby) for rows the next refresh replaces. They move to
-- unlogged tables of their own; league_standings and league_snapshots keep the final
-- standings of finished leagues, which must survive a crash. After a database crash the
-- live tables start empty: a big league is ranked live until its next refresh. A live
-- snapshot also keeps the newest trade and cash movement it saw, so a refresh can be
-- skipped while nothing it ranks has changed.
-- The same columns and primary key (league_id, place) as league_standings.
CREATE UNLOGGED TABLE league_live_standings (LIKE league_standings INCLUDING ALL);

CREATE UNLOGGED TABLE league_live_snapshots (
    league_id           bigint PRIMARY KEY REFERENCES leagues (id) ON DELETE CASCADE,
    taken_at            timestamptz NOT NULL,
    members             integer NOT NULL,
    trades_seen         bigint NOT NULL,
    cash_movements_seen bigint NOT NULL
);

DELETE FROM league_standings s USING leagues l WHERE l.id = s.league_id AND l.finished_at IS NULL;
DELETE FROM league_snapshots s USING leagues l WHERE l.id = s.league_id AND l.finished_at IS NULL;

