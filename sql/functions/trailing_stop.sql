-- The stop a trailing stop order makes from the best price since it was placed (p_hwm:
-- the highest for a sale, the lowest for a buy): a sale's is hwm × (1 − percent/100) or
-- hwm − amount, a buy's hwm × (1 + percent/100) or hwm + amount, rounded to the cent (a
-- sale's never below one). Placing an order and the matcher, which moves hwm as prices
-- come, both ask it.
CREATE OR REPLACE FUNCTION trailing_stop(p_side text, p_hwm numeric, p_percent numeric, p_amount numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_side
        WHEN 'sell' THEN greatest(round(coalesce(p_hwm * (1 - p_percent / 100), p_hwm - p_amount), 2), 0.01)
        ELSE round(coalesce(p_hwm * (1 + p_percent / 100), p_hwm + p_amount), 2) END
$$;
