-- Trade achievements are checked only where a change could earn one (see
-- triggers/award_trade_count.sql and award_earnable.sql), no
-- longer by a trigger on every trade. A portfolio remembers whether its owner may still
-- earn the achievements that count trades; practice portfolios count for nothing.
ALTER TABLE portfolios ADD COLUMN trade_count_awards_due boolean NOT NULL DEFAULT true;
UPDATE portfolios p SET trade_count_awards_due = false
WHERE p.kind = 'practice'
   OR (SELECT count(*) FROM user_achievements a
       WHERE a.user_id = p.user_id AND a.code IN ('first_trade', 'ten_trades')) = 2;

-- The trigger on every trade (absent on a new database, whose triggers the files make
-- after the migrations).
DROP TRIGGER IF EXISTS trades_achievements ON trades;
DROP FUNCTION IF EXISTS award_trade_achievements();

-- The first profit is looked for among a user's profitable sales only.
CREATE INDEX trades_profitable ON trades (portfolio_id) WHERE realized_gain > 0;
