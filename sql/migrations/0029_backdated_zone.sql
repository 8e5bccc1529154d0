-- backdated_actions and backdated_shares take the market's time zone, in which the day an
-- action was recorded is counted (as the corporate-action processor counts it); their
-- files define the new signatures, so the old ones go.
DROP FUNCTION IF EXISTS backdated_shares(bigint, text, date, date, bigint);
DROP FUNCTION IF EXISTS backdated_actions(bigint, text, date, date);
