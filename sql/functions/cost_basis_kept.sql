-- The cost basis of p_kept of p_held shares whose cost basis is p_basis (average cost):
-- the basis in proportion, to ten decimals, and nothing once none are kept. Shorts alike
-- (held and kept negative, the basis too). The one rule of what a sale, a cover or a
-- split leaves of a position's cost (the trade statement, apply_corporate_action).
-- Plain SQL, inlined.
CREATE OR REPLACE FUNCTION cost_basis_kept(p_basis numeric, p_held numeric, p_kept numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_kept = 0 THEN 0 ELSE round(p_basis * p_kept / p_held, 10) END
$$;
