-- Short selling: in a league whose rules allow it, a sale beyond the shares held opens a
-- short position, a holding with a negative quantity. Its cost basis is negative too
-- (minus what the shares were sold for), so average cost = cost_basis / quantity is the
-- average entry price and value − cost_basis the gain, for longs and shorts alike.
-- Everywhere else quantities stay at zero or above: the trigger below refuses a negative
-- quantity unless the portfolio's league allows short selling.

ALTER TABLE holdings DROP CONSTRAINT holdings_quantity_check,
    DROP CONSTRAINT holdings_cost_basis_check,
    DROP CONSTRAINT holdings_reserved_quantity_check,
    ADD CONSTRAINT holdings_cost_basis_check CHECK (sign(cost_basis) * sign(quantity) >= 0),
    ADD CONSTRAINT holdings_reserved_quantity_check CHECK (reserved_quantity >= 0 AND reserved_quantity <= greatest(quantity, 0));

CREATE FUNCTION refuse_short_unless_allowed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM portfolios p JOIN leagues l ON l.id = p.league_id
        WHERE p.id = NEW.portfolio_id AND l.allow_short_selling
    ) THEN
        RAISE EXCEPTION 'a short position needs a league that allows short selling'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'holdings_quantity_check', TABLE = 'holdings', COLUMN = 'quantity';
    END IF;
    RETURN NEW;
END
$$;

-- Only rows going below zero pay for the check.
CREATE TRIGGER holdings_short_allowed BEFORE INSERT OR UPDATE ON holdings
    FOR EACH ROW WHEN (NEW.quantity < 0) EXECUTE FUNCTION refuse_short_unless_allowed();

-- What each position is worth at current prices: negative for a short.
CREATE OR REPLACE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, p.price, h.quantity * p.price AS value
FROM holdings h JOIN current_prices p ON p.symbol = h.symbol
WHERE h.quantity <> 0;
