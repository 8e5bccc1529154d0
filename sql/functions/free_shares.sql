-- The shares of a position that new sales and orders may use: what is held less what open
-- orders hold back. The one definition: a sale's fill, placing a sale, and a sale that may
-- go short (which sells the free shares first). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION free_shares(p_quantity bigint, p_reserved bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_quantity - p_reserved
$$;
