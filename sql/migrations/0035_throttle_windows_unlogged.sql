-- Throttle windows are counted on every bot request (a key's budget) and every login: a
-- write each time, which as a logged table waited for its WAL flush at commit. Unlogged,
-- counting writes no WAL and waits for no flush. After a database crash the table starts
-- empty, so every window starts afresh: at most one more window's budget for anyone.
ALTER TABLE throttle_windows SET UNLOGGED;
