-- An instrument's previous close, as instrument_prices has it (the quote's, else the close
-- before the last one): for a reader of one symbol at a time (holding_values' day change).
CREATE OR REPLACE FUNCTION previous_close(p_symbol text) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT ip.previous_close FROM instrument_prices ip WHERE ip.symbol = p_symbol
$$;
