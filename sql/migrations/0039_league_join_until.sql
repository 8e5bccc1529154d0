-- A late-join window: the moment after which a league takes no more members (NULL: until
-- it ends). Its owner sets it at creation or later (PATCH /api/leagues/{id}).
ALTER TABLE leagues ADD COLUMN join_until timestamptz;
