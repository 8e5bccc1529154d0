-- Which portfolio is which, said once, in one column: `personal` (each user's one), `league`
-- (a member's in an isolated league) or `practice` (a user's own, never ranked). It
-- replaces the practice flag and the rule "no league and not practice" that every query
-- of the personal portfolio restated.
ALTER TABLE portfolios ADD COLUMN kind text NOT NULL DEFAULT 'personal'
    CHECK (kind IN ('personal', 'league', 'practice'));
UPDATE portfolios SET kind = CASE WHEN league_id IS NOT NULL THEN 'league' ELSE 'practice' END
WHERE league_id IS NOT NULL OR practice;
ALTER TABLE portfolios ADD CONSTRAINT portfolios_league_kind CHECK ((kind = 'league') = (league_id IS NOT NULL));

DROP INDEX portfolios_personal_key;
CREATE UNIQUE INDEX portfolios_personal_key ON portfolios (user_id) WHERE kind = 'personal';
DROP INDEX portfolios_practice;
CREATE INDEX portfolios_practice ON portfolios (user_id) WHERE kind = 'practice';

ALTER TABLE portfolios DROP CONSTRAINT portfolios_practice_has_no_league, DROP COLUMN practice;
