-- A resting order that fills or expires tells its owner in Notifications (the toast a page
-- shows is gone after a few seconds). Written in the transaction that fills or expires the
-- order, so it is told exactly once whichever server process does it. A market order
-- filled as it is placed, and an order its owner cancels or replaces, tell nobody: the
-- owner is looking.
CREATE OR REPLACE FUNCTION notify_order_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    portfolio portfolios;
    what text := NEW.side || ' ' || NEW.quantity || ' ' || symbol_shown(NEW.symbol);
    kind text := CASE NEW.type WHEN 'stop_limit' THEN 'stop-limit' ELSE NEW.type END;
    place text;
    price text;
BEGIN
    SELECT * INTO portfolio FROM portfolios WHERE id = NEW.portfolio_id;
    place := CASE portfolio.kind WHEN 'personal' THEN 'your personal portfolio' ELSE '“' || portfolio.name || '”' END;
    IF NEW.status = 'filled' THEN
        SELECT money_text(t.price, portfolio.cash_currency) INTO price FROM trades t WHERE t.id = NEW.trade_id;
        PERFORM notify(NEW.user_id, 'Order to ' || what || ' filled at ' || price,
                       'Your ' || kind || ' order to ' || what || ' filled at ' || price || ' a share in ' || place || '.');
    ELSE
        PERFORM notify(NEW.user_id, 'Order to ' || what || ' expired',
                       'Your ' || kind || ' order to ' || what || ' expired unfilled in ' || place
                       || '; what it held back is free again.');
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER orders_notify_outcome AFTER UPDATE OF status ON orders FOR EACH ROW
    WHEN (OLD.status = 'new' AND NEW.status IN ('filled', 'expired')) EXECUTE FUNCTION notify_order_outcome();
