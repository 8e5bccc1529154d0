-- Host controls. A host who does not play (owner_plays false: no seat, no league
-- portfolio, never ranked); trading frozen by the host, with the reason members are told;
-- resets: how many times members may reset their own league portfolio, and how often
-- each member's was reset (by themselves or by the host).
ALTER TABLE leagues
    ADD COLUMN owner_plays boolean NOT NULL DEFAULT true,
    ADD COLUMN frozen_at timestamptz,
    ADD COLUMN frozen_reason text CHECK (length(frozen_reason) <= 200),
    ADD COLUMN resets_allowed integer NOT NULL DEFAULT 0 CHECK (resets_allowed BETWEEN 0 AND 100),
    ADD CONSTRAINT leagues_reason_while_frozen CHECK (frozen_reason IS NULL OR frozen_at IS NOT NULL),
    ADD CONSTRAINT leagues_resets_isolated CHECK (resets_allowed = 0 OR mode = 'isolated');
-- The matcher leaves the orders of frozen leagues' portfolios alone: few leagues are frozen at once.
CREATE INDEX leagues_frozen ON leagues (id) WHERE frozen_at IS NOT NULL;
-- Every reset of the member's portfolio, and those the member made (the allowance's count).
ALTER TABLE league_members
    ADD COLUMN resets integer NOT NULL DEFAULT 0,
    ADD COLUMN own_resets integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT league_members_resets_check CHECK (own_resets >= 0 AND resets >= own_resets);
-- A host's leagues, which a host who does not play has no seat in.
CREATE INDEX leagues_owner_id ON leagues (owner_id);
