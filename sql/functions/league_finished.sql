-- Whether a league has been finished: its end was processed once (final standings,
-- notices and the podium written, StandingsStore.finishDue). The one reader of
-- `finished_at`: a league not finished still takes its host's changes and freezes and
-- still has its standings snapshotted. Plain SQL, inlined (`NOT league_finished(l)` is
-- planned as `finished_at IS NULL`, matching the partial index on unfinished leagues).
CREATE OR REPLACE FUNCTION league_finished(p_league leagues) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_league.finished_at IS NOT NULL
$$;
