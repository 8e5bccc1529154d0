-- Applies one action to one portfolio's position, once (the application row), in the
-- caller's transaction. A split multiplies the position by the ratio, paying a fractional
-- remainder as cash in lieu at the close before the ex-date divided by the ratio, keeps
-- the cost basis of the whole shares, and scales the open orders of the symbol
-- (quantities × ratio, prices ÷ ratio; an order left with no whole share is cancelled).
-- A dividend pays quantity × amount; a short pays it (out of the cash it has free). Cash
-- is paid in dollars, converted at the rate now for a portfolio in another currency. The
-- owner is told. Returns false when it was applied before, there is no position or no
-- longer the portfolio. Locks
-- orders, then the portfolio, then the holding, as fills do.
CREATE OR REPLACE FUNCTION apply_corporate_action(p_action bigint, p_portfolio bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    action corporate_actions;
    held holdings;
    owner bigint;
    price numeric;
    after bigint;
    paid numeric := 0;
    kind text;
    currency text;
BEGIN
    SELECT * INTO STRICT action FROM corporate_actions WHERE id = p_action;
    PERFORM 1 FROM orders WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status IN ('new', 'held') ORDER BY id FOR UPDATE;
    SELECT user_id, cash_currency INTO owner, currency FROM portfolios WHERE id = p_portfolio FOR UPDATE;
    IF NOT FOUND THEN
        -- Deleted meanwhile (its account erased, its bot deleted): nothing to apply.
        RETURN false;
    END IF;
    SELECT * INTO held FROM holdings WHERE portfolio_id = p_portfolio AND symbol = action.symbol FOR UPDATE;
    IF NOT FOUND OR held.quantity = 0 THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM corporate_action_applications WHERE action_id = p_action AND portfolio_id = p_portfolio;
    IF FOUND THEN
        RETURN false;
    END IF;
    IF action.kind = 'split' THEN
        kind := 'cash_in_lieu';
        after := trunc(held.quantity * action.ratio);
        SELECT close INTO price FROM daily_bars WHERE symbol = action.symbol AND day < action.ex_date ORDER BY day DESC LIMIT 1;
        IF price IS NULL THEN
            SELECT q.price * CASE WHEN action.quote_adjusted THEN action.ratio ELSE 1 END INTO price
            FROM quotes q WHERE q.symbol = action.symbol;
        END IF;
        paid := round((held.quantity * action.ratio - after) * coalesce(price / action.ratio, 0), 2);
        -- Open orders: a reverse split can leave one no whole share to fill (cancelled, what it holds released).
        PERFORM close_orders(ARRAY(SELECT id FROM orders WHERE portfolio_id = p_portfolio AND symbol = action.symbol
                                                           AND status = 'new' AND trunc((quantity - filled_quantity) * action.ratio) < 1),
                             'canceled', 'The ' || split_words(action.ratio) || ' split left the order no whole share.');
        -- What an order filled in part and what it has left are each split.
        UPDATE orders SET quantity = trunc(filled_quantity * action.ratio) + trunc((quantity - filled_quantity) * action.ratio),
                          filled_quantity = trunc(filled_quantity * action.ratio), limit_price = round(limit_price / action.ratio, 4),
                          stop_price = round(stop_price / action.ratio, 4),
                          reserved_quantity = least(trunc(reserved_quantity * action.ratio), trunc(quantity * action.ratio)),
                          updated_at = now()
        WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status IN ('new', 'held');
        UPDATE holdings SET quantity = after,
            reserved_quantity = least(greatest(after, 0), (
                SELECT coalesce(sum(o.reserved_quantity), 0) FROM orders o
                WHERE o.portfolio_id = p_portfolio AND o.symbol = action.symbol AND o.status = 'new')),
            cost_basis = cost_basis_kept(held.cost_basis, held.quantity * action.ratio, after)
        WHERE portfolio_id = p_portfolio AND symbol = action.symbol;
    ELSE
        kind := 'dividend';
        after := held.quantity;
        paid := held.quantity * action.amount;
    END IF;
    -- Dollars per share; a portfolio in another currency is paid at the rate now.
    IF currency <> 'USD' THEN
        paid := round(paid * fx_usd_to(currency), 2);
    END IF;
    IF paid < 0 THEN
        SELECT greatest(paid, -buying_power(cash, reserved_cash)) INTO paid FROM portfolios WHERE id = p_portfolio;
    END IF;
    IF paid <> 0 THEN
        UPDATE portfolios SET cash = cash + paid WHERE id = p_portfolio;
        INSERT INTO cash_movements (portfolio_id, kind, amount, note)
        VALUES (p_portfolio, kind, paid, CASE kind
            WHEN 'dividend' THEN action.symbol || ' dividend of ' || action.amount || ' a share on ' || held.quantity || ' shares'
            ELSE action.symbol || ' split ' || split_words(action.ratio) || ': cash in lieu of a fractional share' END);
    END IF;
    IF action.kind = 'split' THEN
        PERFORM notify(owner, action.symbol || ' split ' || split_words(action.ratio),
                       'You now hold ' || after || ' shares of ' || action.symbol || ' (' || held.quantity || ' before).'
                       || CASE WHEN paid <> 0 THEN ' Cash in lieu of the fraction: ' || money_text(paid, currency) || '.' ELSE '' END);
    ELSE
        PERFORM notify(owner, action.symbol || ' paid a dividend',
                       CASE WHEN paid >= 0 THEN 'You received ' ELSE 'Your short position paid ' END
                       || money_text(abs(paid), currency) || ' for ' || abs(held.quantity) || ' shares ($' || action.amount || ' a share).');
    END IF;
    INSERT INTO corporate_action_applications (action_id, portfolio_id, quantity_before, quantity_after, cash)
    VALUES (p_action, p_portfolio, held.quantity, after, paid);
    RETURN true;
END
$$;
