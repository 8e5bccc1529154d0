-- league_portfolios gains `since`: from when a portfolio's history belongs to the league
-- (a shared league's member joined with a personal portfolio that has a past of its own).
-- Its return type changes, so the old definition is dropped; its file defines it afresh.
DROP FUNCTION IF EXISTS league_portfolios(bigint);
