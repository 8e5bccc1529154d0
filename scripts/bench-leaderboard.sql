-- Seed for scripts/bench-leaderboard: 500 instruments with quotes, then the players of
-- two existing leagues (created over HTTP by their owner, their first member): each
-- seeded player has a personal portfolio funded by one starting-cash movement and five
-- holdings of different symbols.
--
--   psql -v big_league=ID -v big_members=N -v small_league=ID -v small_members=M -f scripts/bench-leaderboard.sql
--
-- big_members and small_members count the players to add (the owner is already in both).
-- Triggers are off while seeding (session_replication_role = replica): no achievements
-- are awarded, no foreign keys checked, and paid_in is set here to the cash movement.
\set ON_ERROR_STOP on
\set symbols 500
BEGIN;
SET LOCAL session_replication_role = replica;

INSERT INTO instruments (symbol, name, sector)
SELECT 'S' || n, 'Stock ' || n, 'Bench' FROM generate_series(1, :symbols) n;

INSERT INTO quotes (symbol, price, previous_close, as_of, source)
SELECT symbol, price, price, now(), 'admin'
FROM (SELECT 'S' || n AS symbol, round((5 + random() * 495)::numeric, 2) AS price FROM generate_series(1, :symbols) n) q;

-- Seeded player n belongs to the big league for n <= big_members, else to the small one.
CREATE TEMP TABLE seeded (n integer PRIMARY KEY, user_id bigint NOT NULL, portfolio_id bigint) ON COMMIT DROP;

WITH created AS (
    INSERT INTO users (username, password_hash)
    SELECT 'member' || n, 'x' FROM generate_series(1, :big_members + :small_members) n
    RETURNING id, username
)
INSERT INTO seeded (n, user_id) SELECT substr(username, 7)::integer, id FROM created;

WITH created AS (
    INSERT INTO portfolios (user_id, name, cash, paid_in)
    SELECT user_id, 'Personal', round((random() * 10000)::numeric, 2), 10000.00 FROM seeded
    RETURNING id, user_id
)
UPDATE seeded s SET portfolio_id = c.id FROM created c WHERE c.user_id = s.user_id;

INSERT INTO cash_movements (portfolio_id, kind, amount, note)
SELECT portfolio_id, 'starting_cash', 10000.00, 'Starting cash' FROM seeded;

-- Five holdings each: one symbol from each fifth of S1..S500, so they are distinct.
INSERT INTO holdings (portfolio_id, symbol, quantity, cost_basis)
SELECT h.portfolio_id, h.symbol, h.quantity, round(h.quantity * q.price * (0.8 + random() * 0.4)::numeric, 2)
FROM (
    SELECT s.portfolio_id, 'S' || ((k - 1) * (:symbols / 5) + 1 + floor(random() * (:symbols / 5))::integer) AS symbol,
           1 + floor(random() * 40)::bigint AS quantity
    FROM seeded s CROSS JOIN generate_series(1, 5) k
) h JOIN quotes q USING (symbol);

INSERT INTO league_members (league_id, user_id)
SELECT CASE WHEN n <= :big_members THEN :big_league ELSE :small_league END, user_id FROM seeded;

UPDATE leagues l SET member_count = (SELECT count(*) FROM league_members m WHERE m.league_id = l.id)
WHERE l.id IN (:big_league, :small_league);
COMMIT;

ANALYZE;
