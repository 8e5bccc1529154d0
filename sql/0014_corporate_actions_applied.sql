-- Splits and dividends applied to the portfolios that hold the stock when the market the
-- server plays reaches the ex-date: each action to each portfolio once, recorded, so a
-- restart, a second server process or a replayed day never applies it twice.

-- When every holder had the action applied. An action whose ex-date was already past
-- when it was recorded (history loaded with prices) is never applied, except by a replay
-- that starts before it.
ALTER TABLE corporate_actions ADD COLUMN applied_at timestamptz;
CREATE INDEX corporate_actions_pending ON corporate_actions (ex_date) WHERE applied_at IS NULL;

CREATE TABLE corporate_action_applications (
    action_id    bigint NOT NULL REFERENCES corporate_actions (id) ON DELETE CASCADE,
    portfolio_id bigint NOT NULL REFERENCES portfolios (id) ON DELETE CASCADE,
    -- The position before and after (a split), and the cash paid or received.
    quantity_before bigint NOT NULL,
    quantity_after  bigint NOT NULL,
    cash            numeric NOT NULL DEFAULT 0,
    applied_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (action_id, portfolio_id)
);

CREATE INDEX corporate_action_applications_portfolio ON corporate_action_applications (portfolio_id, applied_at DESC);

-- Dividends and cash in lieu of fractional shares are income, not money paid in.
ALTER TABLE cash_movements DROP CONSTRAINT cash_movements_kind_check,
    ADD CONSTRAINT cash_movements_kind_check
        CHECK (kind IN ('starting_cash', 'reward', 'adjustment', 'dividend', 'cash_in_lieu', 'deposit', 'withdrawal'));

CREATE OR REPLACE FUNCTION count_paid_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind NOT IN ('dividend', 'cash_in_lieu') THEN
        UPDATE portfolios SET paid_in = paid_in + NEW.amount WHERE id = NEW.portfolio_id;
    END IF;
    RETURN NULL;
END
$$;

-- Whether the stored quote of the symbol was divided by a split's ratio (once): quotes an
-- admin or the simulated market set do not know about the split; replayed and fetched
-- quotes already do.
ALTER TABLE corporate_actions ADD COLUMN quote_adjusted boolean NOT NULL DEFAULT false;

-- "4-for-1", "1-for-2".
CREATE FUNCTION split_words(p_ratio numeric) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_ratio >= 1 THEN trim_scale(p_ratio)::text || '-for-1'
                ELSE '1-for-' || trim_scale(round(1 / p_ratio, 6))::text END
$$;

-- Applies one action to one portfolio's position, once (the application row's primary
-- key), in the caller's transaction. A split multiplies the position by the ratio,
-- paying a fractional remainder as cash in lieu at the close before the ex-date divided
-- by the ratio, keeps the cost basis of the whole shares, and scales the open orders of
-- the symbol (quantities × ratio, prices ÷ ratio; an order left with no whole share is
-- cancelled). A dividend pays quantity × amount; a short pays it (out of the cash it has
-- free). The owner is told. Returns false when it was applied before or there is no
-- position. Locks orders, then the portfolio, then the holding, as fills do.
CREATE FUNCTION apply_corporate_action(p_action bigint, p_portfolio bigint) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    action corporate_actions;
    held holdings;
    owner bigint;
    price numeric;
    after bigint;
    paid numeric := 0;
    freed numeric;
    kind text;
BEGIN
    SELECT * INTO STRICT action FROM corporate_actions WHERE id = p_action;
    PERFORM 1 FROM orders WHERE portfolio_id = p_portfolio AND symbol = action.symbol AND status = 'new' ORDER BY id FOR UPDATE;
    SELECT user_id INTO STRICT owner FROM portfolios WHERE id = p_portfolio FOR UPDATE;
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

-- Everything that changed a portfolio, newest first by (at, source, id): fills (amount is
-- the cash they moved: − cost and fee for a buy, + proceeds after the fee for a sale),
-- cash movements (dividends, cash in lieu, rewards, adjustments, starting cash) and
-- splits (quantity is the shares the split added or removed).
CREATE VIEW activities AS
SELECT t.portfolio_id, t.created_at AS at, 1 AS source, t.id, 'fill'::text AS type, t.symbol, t.side, t.quantity, t.price,
       CASE t.side WHEN 'buy' THEN -(t.amount + t.fee) ELSE t.amount - t.fee END AS amount, t.fee, NULL::text AS note
FROM trades t
UNION ALL
SELECT c.portfolio_id, c.created_at, 2, c.id, c.kind, NULL, NULL, NULL, NULL, c.amount, NULL, c.note
FROM cash_movements c
UNION ALL
SELECT x.portfolio_id, x.applied_at, 3, a.id, 'split', a.symbol, NULL, x.quantity_after - x.quantity_before, NULL, NULL, NULL,
       a.symbol || ' split ' || split_words(a.ratio) || ': ' || x.quantity_before || ' → ' || x.quantity_after || ' shares'
FROM corporate_action_applications x JOIN corporate_actions a ON a.id = x.action_id
WHERE a.kind = 'split';
