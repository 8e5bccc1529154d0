-- An achievement checked only by the change that could earn it, in the same transaction,
-- and only while the owner has not earned it (the code is the trigger's argument; the
-- changed row names the portfolio). Practice portfolios count for nothing.
-- - "Diversified" (several stocks held at once in one portfolio) can only be reached when
--   a holding goes from no shares to some.
-- - "In the green" (a sale for more than the shares cost, after fees) only by a sale that
--   realised a gain.
-- The achievements that count trades have their own trigger (award_trade_count.sql).
CREATE OR REPLACE FUNCTION award_earnable() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wanted text := TG_ARGV[0];
    owner bigint;
BEGIN
    SELECT p.user_id INTO owner FROM portfolios p WHERE p.id = NEW.portfolio_id AND p.kind <> 'practice';
    IF FOUND AND NOT EXISTS (SELECT 1 FROM user_achievements a WHERE a.user_id = owner AND a.code = wanted) THEN
        PERFORM award_if_reached(owner, wanted);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER holdings_diversified_new AFTER INSERT ON holdings
    FOR EACH ROW WHEN (NEW.quantity > 0) EXECUTE FUNCTION award_earnable('diversified');
CREATE OR REPLACE TRIGGER holdings_diversified_again AFTER UPDATE OF quantity ON holdings
    FOR EACH ROW WHEN (OLD.quantity <= 0 AND NEW.quantity > 0) EXECUTE FUNCTION award_earnable('diversified');
CREATE OR REPLACE TRIGGER trades_first_profit AFTER INSERT ON trades
    FOR EACH ROW WHEN (NEW.realized_gain > 0) EXECUTE FUNCTION award_earnable('first_profit');
