-- Units of p_currency per dollar now: the rates in fx_quotes (walked, fetched or the
-- replay day's), else the latest reference rates. NULL when either has no rate. The one
-- SQL reading of the rate now (holding_values, apply_corporate_action); the server's
-- quote providers read the same (FxStore.now without a day).
CREATE OR REPLACE FUNCTION fx_usd_to(p_currency text) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_currency = 'USD' THEN 1
                ELSE (CASE WHEN p_currency = 'EUR' THEN 1
                           ELSE (SELECT per_euro FROM fx_now(ARRAY[p_currency], NULL, 'epoch')) END)
                     / (SELECT per_euro FROM fx_now(ARRAY['USD'], NULL, 'epoch')) END
$$;
