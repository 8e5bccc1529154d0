-- One announcement per statement that stores prices (a simulated tick, a replay day, an
-- admin's price), with every quote it wrote: [symbol, name, price, previous close, as of].
CREATE OR REPLACE FUNCTION stream_quotes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    quotes jsonb;
BEGIN
    SELECT jsonb_agg(jsonb_build_array(
               c.symbol, i.name, c.price::text, c.previous_close::text,
               utc_text(c.as_of, 3)
           ) ORDER BY c.symbol)
    INTO quotes
    FROM changed c JOIN instruments i ON i.symbol = c.symbol;
    IF quotes IS NOT NULL THEN
        PERFORM stream_publish(jsonb_build_object('kind', 'quotes', 'quotes', quotes));
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER quotes_inserted_stream AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stream_quotes();
CREATE OR REPLACE TRIGGER quotes_updated_stream AFTER UPDATE ON quotes
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION stream_quotes();
