-- What a portfolio may spend on new orders and trades: its cash less what its open orders
-- hold back. The one definition: fills, reservations, withdrawals, dividends a short pays,
-- and the valuation the server reports (TradingStore.valuations). Plain SQL, inlined.
CREATE OR REPLACE FUNCTION buying_power(p_cash numeric, p_reserved numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_cash - p_reserved
$$;
