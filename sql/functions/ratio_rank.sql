-- Where a Sharpe or Sortino ratio ranks (best first). A ratio over two daily returns or
-- more ranks as itself. Undefined ones — returns that never vary (Sharpe), or no day down
-- (Sortino), shown as null — rank by the mean daily return's sign: above every ratio when
-- it is positive (gains without risk), below every one when it is negative, and as 0 when
-- it is nil (cash held throughout). With fewer than two returns there is nothing to rank:
-- null, ranked last.
CREATE OR REPLACE FUNCTION ratio_rank(p_ratio numeric, p_days integer, p_mean double precision)
RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_days < 2 OR p_mean IS NULL THEN NULL
                WHEN p_ratio IS NOT NULL THEN p_ratio
                WHEN p_mean > 0 THEN 'Infinity'::numeric
                WHEN p_mean < 0 THEN '-Infinity'::numeric
                ELSE 0 END
$$;
