-- An amount as a player reads it in a notification: dollars as $1,234.50, other
-- currencies as 1,234.50 EUR, yen (which has no minor unit) as 52,866 JPY.
CREATE OR REPLACE FUNCTION money_text(p_amount numeric, p_currency text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_amount < 0 THEN '−' ELSE '' END
        || CASE WHEN p_currency = 'USD' THEN '$' ELSE '' END
        || CASE WHEN p_currency = 'JPY' THEN to_char(round(abs(p_amount)), 'FM999,999,999,999,990')
                ELSE to_char(round(abs(p_amount), 2), 'FM999,999,999,999,990.00') END
        || CASE WHEN p_currency = 'USD' THEN '' ELSE ' ' || p_currency END
$$;
