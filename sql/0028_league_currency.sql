-- Leagues in other currencies: an isolated league may hold its members' cash in its own
-- currency. Its league portfolios buy and sell dollar stocks at the rate now plus the
-- league's spread (each fill records the rate it applied), and every valuation (standings,
-- achievements, the server's) counts holdings in the portfolio's currency at the rate now.
ALTER TABLE leagues
    ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    -- What a fill pays over (a buy) or gets under (a sale) the rate now, in percent.
    ADD COLUMN fx_spread_percent numeric NOT NULL DEFAULT 0 CHECK (fx_spread_percent BETWEEN 0 AND 10),
    ADD CONSTRAINT leagues_currency_isolated CHECK (currency = 'USD' OR mode = 'isolated');

-- The currency a portfolio's cash (and so its cost basis, fees and gains) is held in.
ALTER TABLE portfolios
    ADD COLUMN cash_currency text NOT NULL DEFAULT 'USD' CHECK (cash_currency ~ '^[A-Z]{3}$');

-- Units of the portfolio's currency one dollar of a fill cost or brought (spread included);
-- NULL for a fill in dollars.
ALTER TABLE trades ADD COLUMN fx_rate numeric CHECK (fx_rate > 0);

-- Units of p_currency per dollar now: the rates in fx_quotes (walked, fetched or the
-- replay day's), else the latest reference rates. NULL when either has no rate.
CREATE FUNCTION fx_usd_to(p_currency text) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_currency = 'USD' THEN 1
                ELSE (CASE WHEN p_currency = 'EUR' THEN 1
                           ELSE (SELECT per_euro FROM fx_now(ARRAY[p_currency], current_date, 'epoch')) END)
                     / (SELECT per_euro FROM fx_now(ARRAY['USD'], current_date, 'epoch')) END
$$;

-- A holding keeps its portfolio's currency (fixed when the portfolio is made, never
-- changed), so valuing holdings needs no join to portfolios: a big league's standings
-- read half a million of them.
ALTER TABLE holdings ADD COLUMN cash_currency text NOT NULL DEFAULT 'USD';

CREATE FUNCTION holding_currency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT cash_currency INTO STRICT NEW.cash_currency FROM portfolios WHERE id = NEW.portfolio_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER holdings_currency BEFORE INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION holding_currency();

-- What each position is worth at current prices, in its portfolio's currency (a dollar
-- price times the rate now, to four decimals): negative for a short.
CREATE OR REPLACE VIEW holding_values AS
SELECT h.portfolio_id, h.symbol, h.quantity, h.cost_basis, l.price, h.quantity * l.price AS value
FROM holdings h
JOIN current_prices p ON p.symbol = h.symbol
CROSS JOIN LATERAL (SELECT CASE WHEN h.cash_currency = 'USD' THEN p.price
                                ELSE round(p.price * fx_usd_to(h.cash_currency), 4) END AS price) l
WHERE h.quantity <> 0;

-- Splits and dividends as before (0014); the cash they pay (in dollars) reaches a
-- portfolio in another currency at the rate now.
CREATE OR REPLACE FUNCTION apply_corporate_action(p_action bigint, p_portfolio bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    action corporate_actions;
    held holdings;
    owner bigint;
    price numeric;
    after bigint;
    paid numeric := 0;
    freed numeric;
    kind text;
    currency text;
BEGIN
    SELECT * INTO STRICT action FROM corporate_actions WHERE id = p_action;
    PERFORM 1 FROM orders WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status = 'new' ORDER BY id FOR UPDATE;
    SELECT user_id, cash_currency INTO STRICT owner, currency FROM portfolios WHERE id = p_portfolio FOR UPDATE;
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
        -- Open orders: a reverse split can leave one no whole share (cancelled, reservation released).
        SELECT coalesce(sum(reserved_cash), 0) INTO freed FROM orders
        WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status = 'new' AND trunc(quantity * action.ratio) < 1;
        UPDATE orders SET status = 'canceled', canceled_at = now(), updated_at = now(), reserved_cash = 0, reserved_quantity = 0,
                          reject_reason = 'The ' || split_words(action.ratio) || ' split left the order no whole share.'
        WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status = 'new' AND trunc(quantity * action.ratio) < 1;
        UPDATE portfolios SET reserved_cash = reserved_cash - freed WHERE id = p_portfolio AND freed > 0;
        UPDATE orders SET quantity = trunc(quantity * action.ratio), limit_price = round(limit_price / action.ratio, 4),
                          stop_price = round(stop_price / action.ratio, 4),
                          reserved_quantity = least(trunc(reserved_quantity * action.ratio), trunc(quantity * action.ratio)),
                          updated_at = now()
        WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status = 'new';
        UPDATE holdings SET quantity = after,
            reserved_quantity = least(greatest(after, 0), (
                SELECT coalesce(sum(o.reserved_quantity), 0) FROM orders o
                WHERE o.portfolio_id = p_portfolio AND o.symbol = action.symbol AND o.status = 'new')),
            cost_basis = CASE WHEN after = 0 THEN 0
                              ELSE round(held.cost_basis * after / (held.quantity * action.ratio), 10) END
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
        SELECT greatest(paid, -(cash - reserved_cash)) INTO paid FROM portfolios WHERE id = p_portfolio;
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
                       || CASE WHEN paid <> 0 THEN ' Cash in lieu of the fraction: ' || paid || '.' ELSE '' END);
    ELSE
        PERFORM notify(owner, action.symbol || ' paid a dividend',
                       CASE WHEN paid >= 0 THEN 'You received ' ELSE 'Your short position paid ' END
                       || abs(paid) || ' for ' || abs(held.quantity) || ' shares (' || action.amount || ' a share).');
    END IF;
    INSERT INTO corporate_action_applications (action_id, portfolio_id, quantity_before, quantity_after, cash)
    VALUES (p_action, p_portfolio, held.quantity, after, paid);
    RETURN true;
END
$$;
