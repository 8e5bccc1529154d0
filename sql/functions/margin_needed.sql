-- What a portfolio's positions need in equity under its league's margin rules, from their
-- value (p_longs, and p_shorts as a positive amount): the initial margin — long value ×
-- marginPercent % (100 % without margin) plus short value × shortMarginPercent % — and
-- maintenance, maintenancePercent % of both (0 without the rule); and, where the league
-- lends, what equity p_equity may still buy: (equity − initial) × 100 / marginPercent,
-- truncated to the cent, never below 0 (null for a cash-only league). The one formula: a
-- buy's margin check in the fill statement (TradeStatement), a close's margin call
-- (margin_standing) and a margin account under /v2 all ask it.
CREATE OR REPLACE FUNCTION margin_needed(p_longs numeric, p_shorts numeric, p_margin_percent numeric,
                                         p_short_margin_percent numeric, p_maintenance_percent numeric, p_equity numeric,
                                         OUT initial numeric, OUT maintenance numeric, OUT buying_power numeric)
LANGUAGE sql IMMUTABLE AS $$
    SELECT n.initial, coalesce(p_maintenance_percent, 0) * (p_longs + p_shorts) / 100,
           CASE WHEN p_margin_percent IS NOT NULL THEN greatest(trunc((p_equity - n.initial) * 100 / p_margin_percent, 2), 0) END
    FROM (SELECT p_longs * coalesce(p_margin_percent, 100) / 100 + p_shorts * coalesce(p_short_margin_percent, 0) / 100 AS initial) n
$$;
