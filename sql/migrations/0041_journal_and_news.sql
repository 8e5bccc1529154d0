-- The trade journal: a note on an order and on its trade (a plain market trade with a
-- note is written with its order row, so every note has an order), and a league rule
-- that requires one on its league portfolios' orders and trades.
ALTER TABLE orders ADD COLUMN note text CHECK (length(note) BETWEEN 1 AND 500);
ALTER TABLE trades ADD COLUMN note text CHECK (length(note) BETWEEN 1 AND 500);
ALTER TABLE leagues
    ADD COLUMN journal_required boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT leagues_journal_isolated CHECK (NOT journal_required OR mode = 'isolated');
-- A league's journal, newest first, a portfolio at a time.
CREATE INDEX orders_noted ON orders (portfolio_id, id) WHERE note IS NOT NULL;

-- League news: what the host posts to members.
CREATE TABLE league_news (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    league_id  bigint NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    title      text NOT NULL CHECK (length(title) BETWEEN 1 AND 120),
    body       text NOT NULL CHECK (length(body) BETWEEN 1 AND 2000),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX league_news_by_league ON league_news (league_id, id);
