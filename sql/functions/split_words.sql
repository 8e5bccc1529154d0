-- "4-for-1", "1-for-2".
CREATE OR REPLACE FUNCTION split_words(p_ratio numeric) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_ratio >= 1 THEN trim_scale(p_ratio)::text || '-for-1'
                ELSE '1-for-' || trim_scale(round(1 / p_ratio, 6))::text END
$$;
