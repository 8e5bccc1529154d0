-- A league's retention of its managed students: that many days after the league ends,
-- the accounts its host manages that play in it are erased (unless managed in another of
-- the host's leagues still running). Null keeps them.
ALTER TABLE leagues ADD COLUMN delete_managed_after_days integer CHECK (delete_managed_after_days BETWEEN 0 AND 365);
