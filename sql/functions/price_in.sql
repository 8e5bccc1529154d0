-- A dollar price in a portfolio's currency now: unchanged in dollars, else times the rate
-- now (fx_usd_to), to four decimals; NULL without a rate. The one SQL rule for what a
-- share is worth in another currency (holding_values); FxCurrency.price is the server's
-- for fills, whose rate carries the league's spread.
CREATE OR REPLACE FUNCTION price_in(p_price numeric, p_currency text) RETURNS numeric
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_currency = 'USD' THEN p_price ELSE round(p_price * fx_usd_to(p_currency), 4) END
$$;
