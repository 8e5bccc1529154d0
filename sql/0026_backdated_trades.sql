-- Back-dated trades in practice portfolios: a trade dated a past day fills at that day's
-- close, and the splits and dividends since then reach the shares it bought or sold
-- ("caught up"), each recorded once per (action, portfolio, trade), dated its ex-date.
-- History is written in date order: nothing is dated before a portfolio's latest entry.

-- A catch-up application names its trade; the processor's (the whole position) names none.
ALTER TABLE corporate_action_applications
    ADD COLUMN trade_id bigint REFERENCES trades (id) ON DELETE CASCADE,
    DROP CONSTRAINT corporate_action_applications_pkey,
    ADD CONSTRAINT corporate_action_applications_once UNIQUE NULLS NOT DISTINCT (action_id, portfolio_id, trade_id);

-- Splits as activities: one row per action and portfolio, whatever positions it reached.
CREATE OR REPLACE VIEW activities AS
SELECT t.portfolio_id, t.created_at AS at, 1 AS source, t.id, 'fill'::text AS type, t.symbol, t.side, t.quantity, t.price,
       CASE t.side WHEN 'buy' THEN -(t.amount + t.fee) ELSE t.amount - t.fee END AS amount, t.fee, NULL::text AS note
FROM trades t
UNION ALL
SELECT c.portfolio_id, c.created_at, 2, c.id, c.kind, NULL, NULL, NULL, NULL, c.amount, NULL, c.note
FROM cash_movements c
UNION ALL
SELECT x.portfolio_id, x.applied_at, 3, a.id, 'split', a.symbol, NULL, x.quantity_after - x.quantity_before, NULL, NULL, NULL,
       a.symbol || ' split ' || split_words(a.ratio) || ': ' || x.quantity_before || ' → ' || x.quantity_after || ' shares'
FROM (SELECT action_id, portfolio_id, min(applied_at) AS applied_at,
             sum(quantity_before)::bigint AS quantity_before, sum(quantity_after)::bigint AS quantity_after
      FROM corporate_action_applications GROUP BY action_id, portfolio_id) x
JOIN corporate_actions a ON a.id = x.action_id
WHERE a.kind = 'split';

-- The latest entry of a portfolio's history: its trades, deposits, withdrawals and
-- starting cash (income from splits and dividends follows by itself and does not count).
CREATE FUNCTION latest_entry(p_portfolio bigint) RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT greatest(
        (SELECT max(created_at) FROM trades WHERE portfolio_id = p_portfolio),
        (SELECT max(created_at) FROM cash_movements WHERE portfolio_id = p_portfolio AND kind NOT IN ('dividend', 'cash_in_lieu')))
$$;

-- The income (dividends, cash in lieu) a portfolio's cash holds from after p_at: money
-- an entry dated p_at cannot spend, as it was not there yet.
CREATE FUNCTION income_after(p_portfolio bigint, p_at timestamptz) RETURNS numeric LANGUAGE sql STABLE AS $$
    SELECT coalesce(sum(amount), 0) FROM cash_movements
    WHERE portfolio_id = p_portfolio AND kind IN ('dividend', 'cash_in_lieu') AND created_at > p_at
$$;

-- The actions a fill of p_symbol at the close of p_day in portfolio p_portfolio catches
-- up: those with a later ex-date up to the market's day p_through, except one still due
-- that the processor has not yet applied to this portfolio: it will, to the whole
-- position, fill included (it applies each action to each portfolio once).
CREATE FUNCTION backdated_actions(p_portfolio bigint, p_symbol text, p_day date, p_through date)
RETURNS SETOF corporate_actions LANGUAGE sql STABLE AS $$
    SELECT * FROM corporate_actions a
    WHERE a.symbol = p_symbol AND a.ex_date > p_day AND a.ex_date <= p_through
      AND NOT (a.applied_at IS NULL AND a.ex_date >= (a.created_at AT TIME ZONE 'UTC')::date
               AND NOT EXISTS (SELECT 1 FROM corporate_action_applications x
                               WHERE x.action_id = a.id AND x.portfolio_id = p_portfolio AND x.trade_id IS NULL))
    ORDER BY a.ex_date, a.id
$$;

-- What p_quantity shares (negative: sold) at the close of p_day are today, through the
-- splits since: each split keeps the whole shares (the fraction is paid as cash in lieu).
CREATE FUNCTION backdated_shares(p_portfolio bigint, p_symbol text, p_day date, p_through date, p_quantity bigint)
RETURNS bigint LANGUAGE plpgsql STABLE AS $$
DECLARE
    shares bigint := p_quantity;
    action corporate_actions;
BEGIN
    FOR action IN SELECT * FROM backdated_actions(p_portfolio, p_symbol, p_day, p_through) WHERE kind = 'split' LOOP
        shares := trunc(shares * action.ratio);
    END LOOP;
    RETURN shares;
END
$$;

-- Catches a back-dated fill up, in the fill's transaction: the fill already moved the
-- position by its shares today (backdated_shares); each later split pays the fraction it
-- leaves as cash in lieu, each later dividend pays (a sale: takes back) the amount on the
-- shares as of its ex-date, dated its ex-date (midnight in p_zone, the market's time
-- zone). Each application is recorded once (trade, action). Returns the cash moved.
CREATE FUNCTION catch_up_fill(p_trade bigint, p_through date, p_zone text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    fill trades;
    action corporate_actions;
    shares bigint;
    after bigint;
    price numeric;
    paid numeric;
    total numeric := 0;
    at timestamptz;
BEGIN
    SELECT * INTO STRICT fill FROM trades WHERE id = p_trade;
    shares := CASE fill.side WHEN 'buy' THEN fill.quantity ELSE -fill.quantity END;
    FOR action IN SELECT * FROM backdated_actions(fill.portfolio_id, fill.symbol, (fill.created_at AT TIME ZONE p_zone)::date, p_through) LOOP
        at := action.ex_date::timestamp AT TIME ZONE p_zone;
        IF action.kind = 'split' THEN
            after := trunc(shares * action.ratio);
            SELECT b.close INTO price FROM daily_bars b
            WHERE b.symbol = action.symbol AND b.day < action.ex_date ORDER BY b.day DESC LIMIT 1;
            paid := round((shares * action.ratio - after) * coalesce(price / action.ratio, 0), 2);
        ELSE
            after := shares;
            paid := shares * action.amount;
        END IF;
        IF paid <> 0 THEN
            INSERT INTO cash_movements (portfolio_id, kind, amount, note, created_at)
            VALUES (fill.portfolio_id, CASE action.kind WHEN 'split' THEN 'cash_in_lieu' ELSE 'dividend' END, paid,
                    CASE WHEN action.kind = 'dividend' AND shares > 0 THEN
                             action.symbol || ' dividend of ' || action.amount || ' a share on ' || shares || ' shares'
                         WHEN action.kind = 'dividend' THEN
                             action.symbol || ' dividend of ' || action.amount || ' a share not earned by ' || -shares
                             || ' shares sold before it'
                         ELSE action.symbol || ' split ' || split_words(action.ratio) || ': cash in lieu of a fractional share' END,
                    at);
        END IF;
        INSERT INTO corporate_action_applications (action_id, portfolio_id, trade_id, quantity_before, quantity_after, cash, applied_at)
        VALUES (action.id, fill.portfolio_id, p_trade, shares, after, paid, at);
        total := total + paid;
        shares := after;
    END LOOP;
    UPDATE portfolios SET cash = cash + total WHERE id = fill.portfolio_id AND total <> 0;
    RETURN total;
END
$$;
